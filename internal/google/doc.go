// Package google owns Google Ads through the Data Manager API: Google's own
// normalisation and SHA-256 of user data (not Meta's), the events of a lead
// and its CRM stages, the checks Google would fail a whole request on, the
// HTTP client of events:ingest and requestStatus:retrieve with Google's
// error envelope, the classes of failure, and the OAuth token sources of a
// service account key or an OAuth client's refresh token. It imports model
// only; the outbox handler that uses it lives in deliver.
package google
