package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is a request rate written as "60/m": N requests per second (s),
// minute (m) or hour (h). It is also the burst: a full bucket allows N at
// once. The zero Rate ("off" or "0") means no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// ParseRate reads "N/s", "N/m", "N/h", or "off" / "0".
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" || s == "" {
		return Rate{}, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n <= 0 || n > 1_000_000 {
		return Rate{}, fmt.Errorf("want a rate like 60/m (requests per s, m or h) or off, got %q", s)
	}
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[strings.TrimSpace(unit)]
	if per == 0 {
		return Rate{}, fmt.Errorf("want a rate like 60/m (requests per s, m or h) or off, got %q", s)
	}
	return Rate{N: n, Per: per}, nil
}

// Off tells whether the rate sets no limit.
func (r Rate) Off() bool { return r.N <= 0 }

// String writes the rate as ParseRate reads it.
func (r Rate) String() string {
	if r.Off() {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	if unit == "" {
		return fmt.Sprintf("%d/%s", r.N, r.Per)
	}
	return fmt.Sprintf("%d/%s", r.N, unit)
}

// MarshalText writes the rate (YAML dumps).
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a rate (YAML and env values).
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	*r = v
	return err
}
