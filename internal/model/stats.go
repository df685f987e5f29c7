package model

import "time"

// Stats is the state of the store that metrics report, read at scrape time.
type Stats struct {
	// Leads counts leads per site and verdict.
	Leads map[SiteID]map[Verdict]int
	// Deliveries counts outbox rows per site and state.
	Deliveries map[SiteID]map[DeliveryState]int
	// OldestDue is when the longest-waiting due event (pending or retry)
	// became due; zero when none is due.
	OldestDue time.Time
	// Paused is every site and whether its delivery is paused.
	Paused map[SiteID]bool
}
