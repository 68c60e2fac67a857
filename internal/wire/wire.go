// Package wire decodes the loosely typed values the service sends: amounts
// as JSON numbers or strings (exponent form, integers beyond 64 bits, empty,
// null), dates in the service's two layouts, and flags written as booleans,
// numbers or text. It is the one place such values are parsed; the root
// package and the callback package both build on it.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// MaxAmountLen bounds the text of one amount. The largest real amounts are
// smallest-unit integers of 18-decimal tokens (about 30 digits); anything far
// longer is refused before big-number parsing is attempted.
const MaxAmountLen = 128

// MaxExponent bounds the decimal exponent of an amount, so that a hostile
// "1e999999999" can neither allocate a huge number nor print one.
const MaxExponent = 64

// ErrBadAmount is returned for text that is not a decimal amount.
var ErrBadAmount = errors.New("not a decimal amount")

// ParseDecimal parses amount text: an optional sign, digits with an optional
// fraction, and an optional exponent ("0.0012", "-3", "9.5187e+24", "0E-8",
// ".5"). Surrounding spaces are ignored; "" and "null" are zero. The error
// never quotes the input, which may be attacker-controlled and long.
func ParseDecimal(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return decimal.Zero, nil
	}
	if len(s) > MaxAmountLen {
		return decimal.Zero, fmt.Errorf("%w: longer than %d characters", ErrBadAmount, MaxAmountLen)
	}
	if !isDecimalText(s) {
		return decimal.Zero, ErrBadAmount
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, ErrBadAmount
	}
	if e := d.Exponent(); e > MaxExponent || e < -MaxExponent {
		return decimal.Zero, fmt.Errorf("%w: exponent out of range", ErrBadAmount)
	}
	return d, nil
}

// isDecimalText reports whether s is [+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?.
func isDecimalText(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		intDigits++
	}
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			fracDigits++
		}
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			expDigits++
		}
		if expDigits == 0 || expDigits > 4 {
			return false
		}
	}
	return i == len(s)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// DecodeDecimal decodes one JSON value as an amount: a number, a string
// holding a number, "" or null (both zero).
func DecodeDecimal(raw []byte) (decimal.Decimal, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return decimal.Zero, nil
	}
	switch raw[0] {
	case '"':
		s, err := unquote(raw)
		if err != nil {
			return decimal.Zero, ErrBadAmount
		}
		return ParseDecimal(s)
	case 'n':
		if string(raw) == "null" {
			return decimal.Zero, nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return ParseDecimal(string(raw))
	}
	return decimal.Zero, ErrBadAmount
}

// Amount is a decimal.Decimal that decodes leniently from JSON (see
// DecodeDecimal). Response types use it in their decoding shadows and expose
// plain decimal.Decimal fields.
type Amount decimal.Decimal

// UnmarshalJSON implements json.Unmarshaler.
func (a *Amount) UnmarshalJSON(b []byte) error {
	d, err := DecodeDecimal(b)
	if err != nil {
		return err
	}
	*a = Amount(d)
	return nil
}

// D returns the amount as a decimal.Decimal.
func (a Amount) D() decimal.Decimal { return decimal.Decimal(a) }

// AmountMap is a map of code (usually a fiat currency) to amount. It decodes
// from an object, and from null or an empty JSON array (the service's empty
// map), both giving an empty map.
type AmountMap map[string]decimal.Decimal

// UnmarshalJSON implements json.Unmarshaler. Every amount of the object
// is read, also one that a later key of the same name replaces: a map
// with a value that is not an amount is refused.
func (m *AmountMap) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" || isEmptyArray(b) {
		*m = AmountMap{}
		return nil
	}
	// Each entry has a colon: sized by them (up to a bound that text of
	// colons cannot inflate), a map of prices does not grow as it fills.
	raw := make(map[string]Amount, min(bytes.Count(b, []byte{':'}), 64))
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("amount map: %w", ErrBadAmount)
	}
	out := make(AmountMap, len(raw))
	for k, v := range raw {
		out[k] = v.D()
	}
	*m = out
	return nil
}

// ParseAmountMapText parses JSON text held inside a string field, as in the
// callback fields value_coin_convert and value_forwarded_coin_convert
// (`{"USD":"3.20","EUR":"2.90"}`). Empty text is an empty map.
func ParseAmountMapText(s string) (map[string]decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]decimal.Decimal{}, nil
	}
	var m AmountMap
	if err := m.UnmarshalJSON([]byte(s)); err != nil {
		return nil, err
	}
	return m, nil
}

func isEmptyArray(b []byte) bool {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return false
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// LogTimeLayout is the layout of last_update and next_try in the logs.
const LogTimeLayout = "02/01/2006 15:04:05"

// isoLayouts are the forms prices_updated has been seen in.
var isoLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// ParseTime parses a service date: DD/MM/YYYY HH:MM:SS or ISO 8601, read as
// UTC when it carries no zone. "" and "null" are the zero time.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return time.Time{}, nil
	}
	if len(s) > 64 {
		return time.Time{}, errors.New("not a date: too long")
	}
	// Text in the log layout has a '/' third, and ISO text does not: it is
	// not parsed in the log layout in vain, a failure costing an error.
	if len(s) > 2 && s[2] == '/' {
		if t, err := time.ParseInLocation(LogTimeLayout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	for _, layout := range isoLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("not a date in a known layout")
}

// Time is a time.Time that decodes from the service's date strings (see
// ParseTime), null-safe. A date in a layout it does not know decodes as
// the zero time rather than failing the whole answer: dates are
// informational, and a changed format must not stop a merchant from
// reading the payments (and their amounts) around it.
type Time time.Time

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	s, err := DecodeString(b)
	if err != nil {
		return err
	}
	v, err := ParseTime(s)
	if err != nil {
		v = time.Time{}
	}
	*t = Time(v)
	return nil
}

// T returns the time as a time.Time.
func (t Time) T() time.Time { return time.Time(t) }

// ParseBool reads a flag written as 1/0, true/false (any case), yes/no or "".
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "", "null":
		return false, nil
	}
	return false, errors.New("not a flag")
}

// Bool is a bool that decodes from true/false, 1/0 and their string forms.
type Bool bool

// UnmarshalJSON implements json.Unmarshaler.
func (v *Bool) UnmarshalJSON(b []byte) error {
	s, err := DecodeString(b)
	if err != nil {
		return err
	}
	x, err := ParseBool(s)
	if err != nil {
		return err
	}
	*v = Bool(x)
	return nil
}

// ParseInt reads a whole number written as digits, possibly as "3.0"; "" is 0.
func ParseInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int(n), nil
	}
	d, err := ParseDecimal(s)
	if err != nil || !d.IsInteger() || d.GreaterThan(decimal.NewFromInt(math.MaxInt32)) || d.LessThan(decimal.NewFromInt(math.MinInt32)) {
		return 0, errors.New("not a whole number in the 32-bit range")
	}
	return int(d.IntPart()), nil
}

// Int is an int that decodes from a JSON number or a string holding one.
type Int int

// UnmarshalJSON implements json.Unmarshaler.
func (v *Int) UnmarshalJSON(b []byte) error {
	s, err := DecodeString(b)
	if err != nil {
		return err
	}
	n, err := ParseInt(s)
	if err != nil {
		return err
	}
	*v = Int(n)
	return nil
}

// String is a string that also decodes from a number or a boolean (kept as
// its JSON text) and from null (""). The service is not consistent about
// quoting identifiers and statuses.
type String string

// UnmarshalJSON implements json.Unmarshaler.
func (v *String) UnmarshalJSON(b []byte) error {
	s, err := DecodeString(b)
	if err != nil {
		return err
	}
	*v = String(s)
	return nil
}

// DecodeString returns a JSON scalar as text: a string's contents, a
// number's or boolean's literal text, "" for null. Objects and arrays are an
// error.
func DecodeString(raw []byte) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		return unquote(raw)
	case '{', '[':
		return "", errors.New("expected a scalar, got an object or array")
	}
	return string(raw), nil
}

// unquote returns the contents of the JSON string raw. A string of
// printable ASCII without escapes, as amounts, dates and identifiers are,
// is its own contents; any other goes through encoding/json.
func unquote(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		plain := true
		for _, c := range inner {
			if c < ' ' || c > '~' || c == '"' || c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}
