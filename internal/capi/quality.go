package capi

import (
	"context"
	"encoding/json"
	"net/url"
)

// Meta's Dataset Quality API (formerly Integration Quality):
// GET /{version}/dataset_quality?dataset_id={pixel}&fields=web{...} answers,
// per web event name of a dataset, Meta's Event Match Quality (a composite
// score out of 10 and each match key's coverage) and its deduplication
// feedback. It reads the dataset; nothing is sent to it.
// https://developers.facebook.com/docs/marketing-api/conversions-api/dataset-quality-api

// DatasetQualityFields are the fields a dataset's quality is read with.
const DatasetQualityFields = "web{event_name,event_match_quality{composite_score,match_key_feedback},dedupe_key_feedback}"

// DatasetQuality is what Meta says of a dataset's web events.
type DatasetQuality struct {
	Web []EventQuality `json:"web"`
}

// EventQuality is Meta's view of one event name of a dataset.
type EventQuality struct {
	EventName         string             `json:"event_name"`
	EventMatchQuality *EventMatchQuality `json:"event_match_quality"`
	DedupeKeyFeedback []DedupeFeedback   `json:"dedupe_key_feedback"`
}

// EventMatchQuality is Meta's Event Match Quality of an event name: the
// composite score (0-10) and, per match key, the share of events carrying
// it.
type EventMatchQuality struct {
	CompositeScore   json.Number        `json:"composite_score"`
	MatchKeyFeedback []MatchKeyFeedback `json:"match_key_feedback"`
}

// MatchKeyFeedback is one match key's coverage as Meta counts it.
type MatchKeyFeedback struct {
	Identifier string  `json:"identifier"`
	Coverage   Percent `json:"coverage"`
}

// DedupeFeedback is Meta's deduplication feedback for one dedupe key
// (event_id, say): the share of browser and server events carrying it.
type DedupeFeedback struct {
	DedupeKey                   string  `json:"dedupe_key"`
	BrowserEventsWithDedupeKey  Percent `json:"browser_events_with_dedupe_key"`
	ServerEventsWithDedupeKey   Percent `json:"server_events_with_dedupe_key"`
	OverallBrowserCoverageByKey Percent `json:"overall_browser_coverage_from_dedupe_key"`
}

// Percent is a share Meta writes as {"percentage": 12.5}.
type Percent struct {
	Percentage json.Number `json:"percentage"`
}

// DatasetQuality reads Meta's quality figures of a dataset (a pixel id)
// with the site's token. Errors are *APIError as for Send: a token without
// access to the dataset is Meta's OAuth or permission error.
func (c *Client) DatasetQuality(ctx context.Context, a GraphAuth, datasetID string) (*DatasetQuality, error) {
	if err := checkID("dataset", datasetID); err != nil {
		return nil, err
	}
	var q DatasetQuality
	if err := c.graphGet(ctx, a, "dataset_quality", url.Values{"dataset_id": {datasetID},
		"fields": {DatasetQualityFields}}, &q); err != nil {
		return nil, err
	}
	return &q, nil
}
