package model

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written as "168h" or "7d" in config and JSON.
type Duration time.Duration

// ParseDuration reads Go durations plus a "d" (day) suffix.
func ParseDuration(s string) (Duration, error) {
	if n := len(s); n > 1 && s[n-1] == 'd' {
		var days float64
		if _, err := fmt.Sscanf(s[:n-1], "%g", &days); err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return Duration(days * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return Duration(d), nil
}

// String writes the duration the way time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a string duration or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("invalid duration %s", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := ParseDuration(s)
	*d = v
	return err
}

// MarshalText writes the duration as a string (YAML dumps).
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a string duration (YAML and env values).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	*d = v
	return err
}
