package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDecimal(t *testing.T) {
	good := map[string]string{
		"0":                              "0",
		"0.0012":                         "0.0012",
		" 0.0012 ":                       "0.0012",
		"-3":                             "-3",
		"+3":                             "3",
		".5":                             "0.5",
		"5.":                             "5",
		"9.5187e+24":                     "9518700000000000000000000",
		"9.5187E24":                      "9518700000000000000000000",
		"0E-8":                           "0",
		"1.5e-7":                         "0.00000015",
		"123456789012345678901234567890": "123456789012345678901234567890",
		"18446744073709551617":           "18446744073709551617",
		"1e64":                           "1" + strings.Repeat("0", 64),
		"1e-64":                          "0." + strings.Repeat("0", 63) + "1",
		"":                               "0",
		"  ":                             "0",
		"null":                           "0",
		"00012.50":                       "12.5",
	}
	for in, want := range good {
		d, err := ParseDecimal(in)
		require.NoError(t, err, "%q", in)
		assert.True(t, decimal.RequireFromString(want).Equal(d), "%q: got %s", in, d)
	}
	bad := []string{
		"abc", "1,5", "1.2.3", "--1", "+-1", "1e", "1e+", "e5", ".", "-", "+", "0x10", "NaN", "Inf", "Infinity",
		"1 000", "1e99999", "1e65", "1e-65", "5e70", "1_000", "１", "1e1.5", "\"1\"", "null ", // "null " trims to null
		strings.Repeat("9", MaxAmountLen+1),
	}
	for _, in := range bad {
		if strings.TrimSpace(in) == "null" {
			continue
		}
		d, err := ParseDecimal(in)
		assert.ErrorIs(t, err, ErrBadAmount, "%q", in)
		assert.True(t, d.IsZero(), "%q", in)
	}
}

// TestParseDecimalErrorsNeverQuoteInput: the error text comes from a fixed
// set, so it can never carry the (possibly hostile, possibly long) input.
func TestParseDecimalErrorsNeverQuoteInput(t *testing.T) {
	for _, in := range []string{"secret-token-123", strings.Repeat("7", 500), "1e99999", "<script>"} {
		_, err := ParseDecimal(in)
		require.Error(t, err)
		assert.Contains(t, errorTexts, err.Error())
		_, err = DecodeDecimal([]byte(strconv.Quote(in)))
		require.Error(t, err)
		assert.Contains(t, errorTexts, err.Error())
	}
}

// errorTexts are all the error messages of ParseDecimal and DecodeDecimal.
var errorTexts = []string{
	ErrBadAmount.Error(),
	ErrBadAmount.Error() + ": longer than " + strconv.Itoa(MaxAmountLen) + " characters",
	ErrBadAmount.Error() + ": exponent out of range",
}

func TestDecodeDecimal(t *testing.T) {
	good := map[string]string{
		`1.5`:                            "1.5",
		`"1.5"`:                          "1.5",
		`-0.25`:                          "-0.25",
		`9.5187e+24`:                     "9518700000000000000000000",
		`"0E-8"`:                         "0",
		`123456789012345678901234567890`: "123456789012345678901234567890",
		`""`:                             "0",
		`null`:                           "0",
		`"null"`:                         "0",
		``:                               "0",
		` 7 `:                            "7",
		`"\u0031\u0032"`:                 "12",
	}
	for in, want := range good {
		d, err := DecodeDecimal([]byte(in))
		require.NoError(t, err, "%s", in)
		assert.True(t, decimal.RequireFromString(want).Equal(d), "%s: got %s", in, d)
	}
	for _, in := range []string{`true`, `false`, `{}`, `[]`, `"abc"`, `nul`, `"1`, `1 2`, `"1e999"`, `NaN`, `+1`, `.5`} {
		_, err := DecodeDecimal([]byte(in))
		assert.ErrorIs(t, err, ErrBadAmount, "%s", in)
	}
}

func TestAmountAndAmountMap(t *testing.T) {
	var v struct {
		A Amount    `json:"a"`
		B Amount    `json:"b"`
		M AmountMap `json:"m"`
		E AmountMap `json:"e"`
		N AmountMap `json:"n"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a": "0.1", "b": 2e3, "m": {"USD": "1.5", "EUR": 1.4, "JPY": null}, "e": [], "n": null}`), &v))
	assert.Equal(t, "0.1", v.A.D().String())
	assert.Equal(t, "2000", v.B.D().String())
	assert.Len(t, v.M, 3)
	assert.Equal(t, "1.5", v.M["USD"].String())
	assert.True(t, v.M["JPY"].IsZero())
	assert.NotNil(t, v.E)
	assert.Empty(t, v.E)
	assert.NotNil(t, v.N)

	var m AmountMap
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &m))
	assert.Error(t, json.Unmarshal([]byte(`{"USD": "lots"}`), &m))
	assert.Error(t, json.Unmarshal([]byte(`"x"`), &m))
	var a Amount
	assert.Error(t, json.Unmarshal([]byte(`{}`), &a))
}

func TestParseAmountMapText(t *testing.T) {
	m, err := ParseAmountMapText(`{"USD":"3.20","EUR":"2.90"}`)
	require.NoError(t, err)
	assert.Equal(t, "3.2", m["USD"].String())
	m, err = ParseAmountMapText("  ")
	require.NoError(t, err)
	assert.NotNil(t, m)
	assert.Empty(t, m)
	_, err = ParseAmountMapText(`{"USD":`)
	assert.Error(t, err)
}

func TestParseTime(t *testing.T) {
	good := map[string]time.Time{
		"14/07/2021 11:55:07":              time.Date(2021, 7, 14, 11, 55, 7, 0, time.UTC),
		" 02/01/2025 23:59:59 ":            time.Date(2025, 1, 2, 23, 59, 59, 0, time.UTC),
		"2024-05-21T09:14:33.512346Z":      time.Date(2024, 5, 21, 9, 14, 33, 512346000, time.UTC),
		"2024-05-21T11:14:33+02:00":        time.Date(2024, 5, 21, 9, 14, 33, 0, time.UTC),
		"2024-05-21T09:14:33":              time.Date(2024, 5, 21, 9, 14, 33, 0, time.UTC),
		"2024-05-21 09:14:33.25":           time.Date(2024, 5, 21, 9, 14, 33, 250000000, time.UTC),
		"2024-05-21 09:14:33.123456+00:00": time.Date(2024, 5, 21, 9, 14, 33, 123456000, time.UTC),
		"":                                 {},
		"null":                             {},
	}
	for in, want := range good {
		got, err := ParseTime(in)
		require.NoError(t, err, "%q", in)
		assert.True(t, want.Equal(got), "%q: got %v", in, got)
		if !got.IsZero() {
			assert.Equal(t, time.UTC, got.Location())
		}
	}
	for _, in := range []string{"yesterday", "07/14/2021 11:55:07", "14/07/2021", "1700000000", strings.Repeat("1", 65)} {
		_, err := ParseTime(in)
		assert.Error(t, err, "%q", in)
	}

	var v struct {
		A Time `json:"a"`
		B Time `json:"b"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"a": "14/07/2021 11:55:07", "b": null}`), &v))
	assert.Equal(t, 2021, v.A.T().Year())
	assert.True(t, v.B.T().IsZero())
	assert.Error(t, json.Unmarshal([]byte(`{"a": {}}`), &v))
}

func TestBoolIntString(t *testing.T) {
	for in, want := range map[string]bool{`true`: true, `1`: true, `"1"`: true, `"True"`: true, `"yes"`: true, `"on"`: true,
		`false`: false, `0`: false, `"0"`: false, `""`: false, `null`: false, `"off"`: false} {
		var b Bool
		require.NoError(t, json.Unmarshal([]byte(in), &b), in)
		assert.Equal(t, want, bool(b), in)
	}
	var b Bool
	assert.Error(t, json.Unmarshal([]byte(`"maybe"`), &b))
	assert.Error(t, json.Unmarshal([]byte(`2`), &b))

	for in, want := range map[string]int{`3`: 3, `"3"`: 3, `"3.0"`: 3, `3e0`: 3, `""`: 0, `null`: 0, `-2`: -2} {
		var n Int
		require.NoError(t, json.Unmarshal([]byte(in), &n), in)
		assert.Equal(t, want, int(n), in)
	}
	for _, in := range []string{`3.5`, `"x"`, `1e12`, `[]`} {
		var n Int
		assert.Error(t, json.Unmarshal([]byte(in), &n), in)
	}

	for in, want := range map[string]string{`"a"`: "a", `12`: "12", `18446744073709551617`: "18446744073709551617", `true`: "true", `null`: "", `"\u00e9"`: "é"} {
		var s String
		require.NoError(t, json.Unmarshal([]byte(in), &s), in)
		assert.Equal(t, want, string(s), in)
	}
	var s String
	assert.Error(t, json.Unmarshal([]byte(`{"a":1}`), &s))
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &s))
}

// FuzzParseDecimal: never panics; a valid result round-trips through its
// own text; the error never contains the input.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range decimalSeeds {
		f.Add(s)
	}
	for _, s := range []string{
		"0", "0.0012", "-3", ".5", "5.", "9.5187e+24", "0E-8", "1e64", "1e-64", "1e65", "123456789012345678901234567890",
		"", "null", "abc", "1e9999", "-0", "+.5e-3", strings.Repeat("9", MaxAmountLen), strings.Repeat("1", MaxAmountLen+1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDecimal(s)
		if err != nil {
			if !errors.Is(err, ErrBadAmount) {
				t.Fatalf("error %v is not ErrBadAmount", err)
			}
			if !containsString(errorTexts, err.Error()) {
				t.Fatalf("unexpected error text %q", err.Error())
			}
			if !d.IsZero() {
				t.Fatalf("error with a non-zero value %s", d)
			}
			return
		}
		if e := d.Exponent(); e > MaxExponent || e < -MaxExponent {
			t.Fatalf("exponent %d out of range for %q", e, s)
		}
		text := d.String()
		if len(text) > MaxAmountLen {
			return // valid, but its plain form is longer than an input may be
		}
		back, err := ParseDecimal(text)
		if err != nil {
			t.Fatalf("%q parsed to %s, which does not parse: %v", s, text, err)
		}
		if !back.Equal(d) {
			t.Fatalf("%q: %s round-tripped to %s", s, d, back)
		}
		// The JSON forms agree.
		for _, raw := range [][]byte{[]byte(strconv.Quote(text)), []byte(text)} {
			if raw[0] == '+' || raw[0] == '.' {
				continue
			}
			j, err := DecodeDecimal(raw)
			if err != nil || !j.Equal(d) {
				t.Fatalf("DecodeDecimal(%s) = %s, %v; want %s", raw, j, err, d)
			}
		}
	})
}

// FuzzDecodeDecimal: any JSON value; never panics; the error never
// contains the input; strings and bare numbers agree.
func FuzzDecodeDecimal(f *testing.F) {
	for _, s := range []string{
		`1.5`, `"1.5"`, `9.5187e+24`, `"0E-8"`, `null`, `""`, `"null"`, `123456789012345678901234567890`,
		`true`, `{}`, `[]`, `"\u0031"`, `"1e999"`, `-`, `"`, `"` + strings.Repeat("1", 200) + `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := DecodeDecimal(raw)
		if err != nil {
			if !containsString(errorTexts, err.Error()) {
				t.Fatalf("unexpected error text %q", err.Error())
			}
			return
		}
		if e := d.Exponent(); e > MaxExponent || e < -MaxExponent {
			t.Fatalf("exponent %d out of range", e)
		}
		// A quoted bare number decodes to the same value.
		trimmed := strings.TrimSpace(string(raw))
		if trimmed != "" && trimmed[0] != '"' && trimmed != "null" {
			q, err := DecodeDecimal([]byte(strconv.Quote(trimmed)))
			if err != nil || !q.Equal(d) {
				t.Fatalf("quoted %s = %s, %v; bare = %s", trimmed, q, err, d)
			}
		}
	})
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decimalSeeds are amounts around the edges of the grammar, kept from the
// fuzzing of an earlier fast path as inputs of FuzzParseDecimal.
var decimalSeeds = []string{
	"0", "-0", "+0", "3.20", "3.2", "-0.50", ".5", "-.5", "7.", "+7.", ".", "-", "",
	"null", " 1.5 ", "123456789012345678", "1234567890123456789", "0.000000000000000001",
	"99999999999999999.9", "1e5", "0E-8", "9.5187e+24", "1.2.3", "1..2", "--1", "+-1",
	"1_000", "0x10", "１", "\u22121", "00012.3400",
}

// amountMapSeeds are amount maps around the edges of JSON, kept from the
// fuzzing of an earlier scanner as inputs of FuzzParseAmountMapText.
var amountMapSeeds = []string{
	`{"USD": "3.20", "EUR": "2.94"}`,
	`{"USD":"3.20","EUR":"2.90"}`,
	` { "USD" : 3.2 , "JPY" : null } `,
	`{}`, `{ }`, `[]`, `null`, ``, `  `,
	`{"USD":01}`, `{"USD":1.}`, `{"USD":.5}`, `{"USD":-}`, `{"USD":1e}`, `{"USD":1e+}`,
	`{"USD":-0.5e-3}`, `{"USD":1E+5}`, `{"USD":+1}`, `{"USD":1-2}`,
	`{"a":"x","a":"1"}`, `{"a":"1","a":"x"}`, `{"a":1,}`, `{"a":1}x`, `{"a":1}}`,
	`{"a":nullx}`, `{"a":true}`, `{"a":{"b":1}}`, `{"a":[1]}`, `{"\u0055SD":"1"}`,
	`{"USD":"\u0031"}`, `{"é":"1"}`, "{\"a\":\"1\"}\x00", `{"a":"1e99999"}`,
	`{"a":"  1.5  "}`, `{"a":""}`, `{"a":"null"}`, `{"a" "1"}`, `{"a":}`, `{`,
	`{"a":12345678901234567890123}`,
}

// FuzzParseAmountMapText: never panics; an accepted text holds a JSON
// object (or null, [] or nothing) whose every value DecodeDecimal
// accepts, to the same amounts; the error never quotes the input.
func FuzzParseAmountMapText(f *testing.F) {
	for _, s := range amountMapSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseAmountMapText(s)
		if err != nil {
			if len(s) > 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("the error quotes the input: %v", err)
			}
			return
		}
		if m == nil {
			t.Fatalf("%q: accepted with a nil map", s)
		}
		var raw map[string]json.RawMessage
		if strings.TrimSpace(s) == "" || json.Unmarshal([]byte(s), &raw) != nil {
			if len(m) != 0 {
				t.Fatalf("%q: not an object, yet %d amounts", s, len(m))
			}
			return
		}
		if len(raw) != len(m) {
			t.Fatalf("%q: %d keys, %d amounts", s, len(raw), len(m))
		}
		for k, v := range raw {
			d, err := DecodeDecimal(v)
			if err != nil || !d.Equal(m[k]) || d.Exponent() != m[k].Exponent() {
				t.Fatalf("%q: key %q: %v, %v; map has %v", s, k, d, err, m[k])
			}
		}
	})
}

// FuzzDecodeString: a JSON string decodes to what encoding/json makes of
// it, whether unquote takes it as its own contents or not, and text that
// is not one JSON string fails as encoding/json fails.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{
		`"USD"`, `"2024-05-21T09:01:07.243720Z"`, `""`, `"a\"b"`, `"\u0041"`, `"é"`, "\"\x7f\"", "\"\xff\"",
		"\"a\tb\"", `"a"b"`, `"`, `"abc`, `abc"`, `"\"`, `"a\\"`, `"/"`, `"\/"`, ` "x" `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 || trimmed[0] != '"' {
			return
		}
		got, err := DecodeString(raw)
		var want string
		werr := json.Unmarshal(trimmed, &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", raw, err, werr)
		}
		if err == nil && got != want {
			t.Fatalf("%q: %q, encoding/json %q", raw, got, want)
		}
	})
}
