package invoice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that JSON writes as text ("15m0s"), the
// way time.Duration.String writes it, so that the invoice JSON is read
// the same in any language. Its methods are time.Duration's (Seconds,
// String, ...); the value itself is d.Duration.
type Duration struct{ time.Duration }

// MarshalJSON writes d as a string, "15m0s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Duration.String())
}

// UnmarshalJSON reads a string in time.ParseDuration's form, or a number
// of nanoseconds (how invoices were stored before v0.2.0).
func (d *Duration) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invoice: duration %q: %w", s, err)
		}
		d.Duration = v
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("invoice: duration %s: not a string or a whole number of nanoseconds", b)
	}
	d.Duration = time.Duration(n)
	return nil
}
