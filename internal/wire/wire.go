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
	if d, ok := parsePlainDecimal(s); ok {
		return d, nil
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

// maxPlainDigits is the most digits parsePlainDecimal reads: 10^18 - 1
// fits in an int64.
const maxPlainDigits = 18

// parsePlainDecimal parses the common form of an amount, an optional sign
// and digits with an optional fraction ("3.20", "-0.5", ".5", "7."), with
// at most maxPlainDigits digits and no exponent, without the general parser.
// The result has the coefficient and exponent decimal.NewFromString gives
// for the same text. ok is false for any other text, which then takes the
// general path.
func parsePlainDecimal(s string) (d decimal.Decimal, ok bool) {
	i := 0
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		i++
	}
	var n int64
	digits, frac := 0, 0
	point := false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			n = n*10 + int64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return decimal.Decimal{}, false
		}
	}
	if digits == 0 || digits > maxPlainDigits {
		return decimal.Decimal{}, false
	}
	if neg {
		n = -n
	}
	return decimal.New(n, int32(-frac)), true
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
		if s, ok := plainString(raw); ok {
			return ParseDecimal(s)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
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

// UnmarshalJSON implements json.Unmarshaler.
func (m *AmountMap) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" || isEmptyArray(b) {
		*m = AmountMap{}
		return nil
	}
	if out, ok := parseFlatAmounts(b); ok {
		*m = out
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("amount map: %w", ErrBadAmount)
	}
	out := make(AmountMap, len(raw))
	for k, v := range raw {
		d, err := DecodeDecimal(v)
		if err != nil {
			return fmt.Errorf("amount map entry: %w", err)
		}
		out[k] = d
	}
	*m = out
	return nil
}

// parseFlatAmounts reads the common shape of an amount map without a
// decoder: a JSON object whose keys are plain strings (see plainString) and
// whose values are plain strings, numbers or null, each a valid amount. ok
// is false for anything else (escapes, non-ASCII text, nested values, bad
// JSON, a value that is not an amount), which then goes through
// encoding/json; the result is the same either way. For string input the
// keys share its memory.
func parseFlatAmounts[T string | []byte](b T) (out AmountMap, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	out = AmountMap{}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		// Key.
		end := plainStringEnd(b, i)
		if end < 0 {
			return nil, false
		}
		key := string(b[i+1 : end-1])
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return nil, false
		}
		// Value.
		var d decimal.Decimal
		var err error
		switch c := b[i]; {
		case c == '"':
			end = plainStringEnd(b, i)
			if end < 0 {
				return nil, false
			}
			d, err = ParseDecimal(string(b[i+1 : end-1]))
		case c == '-' || isDigit(c):
			end = jsonNumberEnd(b, i)
			if end < 0 {
				return nil, false
			}
			d, err = ParseDecimal(string(b[i:end]))
		case c == 'n' && len(b)-i >= 4 && string(b[i:i+4]) == "null":
			end = i + 4
			d = decimal.Zero
		default:
			return nil, false
		}
		if err != nil {
			return nil, false
		}
		out[key] = d
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			if skipSpace(b, i+1) != len(b) {
				return nil, false
			}
			return out, true
		default:
			return nil, false
		}
	}
}

// jsonNumberEnd returns the index just past the JSON number
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? that starts at b[i], or -1.
func jsonNumberEnd[T string | []byte](b T, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b) || !isDigit(b[i]):
		return -1
	case b[i] == '0':
		i++
	default:
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

// plainStringEnd returns the index just past the plain JSON string (see
// plainString) that starts at b[i], or -1.
func plainStringEnd[T string | []byte](b T, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c < 0x20 || c >= 0x80 || c == '\\':
			return -1
		}
	}
	return -1
}

func skipSpace[T string | []byte](b T, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// ParseAmountMapText parses JSON text held inside a string field, as in the
// callback fields value_coin_convert and value_forwarded_coin_convert
// (`{"USD":"3.20","EUR":"2.90"}`). Empty text is an empty map.
func ParseAmountMapText(s string) (map[string]decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]decimal.Decimal{}, nil
	}
	if m, ok := parseFlatAmounts(s); ok {
		return m, nil
	}
	var m AmountMap
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// ValidAmountMapText reports whether ParseAmountMapText accepts s. For
// the common shape (see parseFlatAmounts, with amounts of at most 18
// digits and no exponent) it decides without building the map or
// allocating; any other text is parsed by ParseAmountMapText.
func ValidAmountMapText[T string | []byte](s T) bool {
	if checkFlatAmounts(s) {
		return true
	}
	_, err := ParseAmountMapText(string(s))
	return err == nil
}

// checkFlatAmounts reports true only for text parseFlatAmounts reads
// whole (so ParseAmountMapText accepts it) whose every amount is in the
// form parsePlainDecimal reads. false means: not known without parsing.
func checkFlatAmounts[T string | []byte](b T) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		end := plainStringEnd(b, i)
		if end < 0 {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			end = plainStringEnd(b, i)
			if end < 0 || !isPlainDecimal(b[i+1:end-1]) {
				return false
			}
		case c == '-' || isDigit(c):
			end = jsonNumberEnd(b, i)
			if end < 0 || !isPlainDecimal(b[i:end]) {
				return false
			}
		case c == 'n' && len(b)-i >= 4 && string(b[i:i+4]) == "null":
			end = i + 4
		default:
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// isPlainDecimal reports whether parsePlainDecimal reads s: an optional
// sign, then 1 to maxPlainDigits digits with at most one '.' among them.
func isPlainDecimal[T string | []byte](s T) bool {
	i := 0
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		i++
	}
	digits := 0
	point := false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			digits++
		case c == '.' && !point:
			point = true
		default:
			return false
		}
	}
	return digits > 0 && digits <= maxPlainDigits
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
	if t, err := time.ParseInLocation(LogTimeLayout, s, time.UTC); err == nil {
		return t, nil
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
		if s, ok := plainString(raw); ok {
			return s, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '{', '[':
		return "", errors.New("expected a scalar, got an object or array")
	}
	return string(raw), nil
}

// plainString returns the contents of a JSON string that has no escapes,
// control characters or non-ASCII bytes: the common case, which needs no
// decoder. Other strings report false and go through encoding/json.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}
