// Package testkit is the one set of test helpers the whole repository
// shares: a settable clock, waiting for a condition, and builders for the
// domain's sites, leads and config files, so that a test says only what is
// particular to it.
//
// It imports model and nothing else of ours (no store: store's own tests use
// it), so any test package may import it. A database comes from
// internal/store/storetest; AddSite stores a built site through the small
// SiteUpserter interface that both *store.DB and *store.Tx satisfy.
package testkit
