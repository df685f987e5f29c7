package model

import "time"

// Stats is the state of the store that metrics report, read at scrape time.
type Stats struct {
	// Leads counts leads per site and verdict.
	Leads map[SiteID]map[Verdict]int
	// Deliveries counts events per site and state: outbox rows, queued
	// PageViews (pending) and those sent from the queue.
	Deliveries map[SiteID]map[DeliveryState]int
	// OldestDue is when the longest-waiting due event (pending or retry)
	// became due; zero when none is due.
	OldestDue time.Time
	// Paused is every site and whether its delivery is paused.
	Paused map[SiteID]bool
}

// WriterStats counts the work of SQLite's single writer since the database
// was opened; all zero on PostgreSQL. Calls divided by Commits is how many
// requests shared a commit, Commits divided by LogSyncs how many commits
// shared an fsync.
type WriterStats struct {
	// Commits counts the transactions the group committer committed.
	Commits int64
	// Calls counts the InTx calls those transactions carried.
	Calls int64
	// Rebuilds counts the batches rebuilt because a call failed: rolled
	// back and their earlier calls' writes run again (see the store's
	// group commit). A few a minute are a few failing requests; as many as
	// commits mean most batches pay for a failure.
	Rebuilds int64
	// LogSyncs counts the fsyncs of the write-ahead log.
	LogSyncs int64
	// LogSyncBuckets[i] counts the fsyncs finished within LogSyncBounds[i]
	// seconds (cumulative, as a Prometheus histogram's le); the last entry
	// counts every fsync finished. LogSyncSeconds is the time they took in
	// all. Every request's answer waits for one: the disk's share of its
	// latency.
	LogSyncBuckets []int64
	LogSyncSeconds float64
	// BusySeconds is the time the committer spent running batches (their
	// calls and commits): the one writer's busy time.
	BusySeconds float64
}

// LogSyncBounds are the upper bounds, in seconds, of WriterStats'
// LogSyncBuckets: an fsync takes a fraction of a millisecond on a quiet
// SSD, and tens of milliseconds or more on a busy or shared disk.
var LogSyncBounds = [...]float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}
