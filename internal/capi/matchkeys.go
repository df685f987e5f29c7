package capi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MatchKey is one line of MatchKeys output: the field and value as given,
// and either the normalised value and its hash or why it was rejected.
type MatchKey struct {
	Field      string  `json:"field"`
	Value      string  `json:"value"`
	Normalized *string `json:"normalized"`
	Hash       string  `json:"hash,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// MatchKeys reads JSON lines {"field": "em", "value": "..."} from r and
// writes one JSON line per input line to w: the value normalised and hashed
// as it would be sent to Meta, or "normalized": null with the reason it is
// rejected. A line that is not such an object gets an error line and the
// rest are still read; blank lines are skipped. country is the default
// region for phone numbers. It returns only read and write errors.
func MatchKeys(r io.Reader, w io.Writer, country string) error {
	br := bufio.NewReader(r)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if werr := enc.Encode(matchKey(line, n, country)); werr != nil {
				return fmt.Errorf("matchkeys: write: %w", werr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("matchkeys: read line %d: %w", n, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("matchkeys: write: %w", err)
	}
	return nil
}

func matchKey(line []byte, n int, country string) MatchKey {
	var in struct {
		Field string          `json:"field"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(line, &in); err != nil {
		return MatchKey{Error: fmt.Sprintf("line %d: not a JSON object {\"field\", \"value\"}: %v", n, err)}
	}
	out := MatchKey{Field: in.Field}
	// A number is accepted as its digits (phones and ids are often numbers
	// in exported files).
	var num json.Number
	switch {
	case len(in.Value) == 0 || string(in.Value) == "null":
	case json.Unmarshal(in.Value, &out.Value) == nil:
	case json.Unmarshal(in.Value, &num) == nil:
		out.Value = num.String()
	default:
		out.Error = fmt.Sprintf("line %d: value must be a string or a number", n)
		return out
	}
	norm, err := Normalize(in.Field, out.Value, country)
	if err == nil {
		var h string
		if h, err = HashField(in.Field, out.Value, country); err == nil {
			out.Normalized, out.Hash = &norm, h
			return out
		}
	}
	out.Error = err.Error()
	return out
}
