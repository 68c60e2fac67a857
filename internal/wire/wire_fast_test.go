package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast paths (parsePlainDecimal, parseFlatAmounts) must give exactly
// what the general paths give. These tests compare them with reference
// implementations that have no fast path.

// fastPathRefDecimal is ParseDecimal without parsePlainDecimal.
func fastPathRefDecimal(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return decimal.Zero, nil
	}
	if len(s) > MaxAmountLen || !isDecimalText(s) {
		return decimal.Zero, ErrBadAmount
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, ErrBadAmount
	}
	if e := d.Exponent(); e > MaxExponent || e < -MaxExponent {
		return decimal.Zero, ErrBadAmount
	}
	return d, nil
}

// fastPathRefAmount is DecodeDecimal on top of fastPathRefDecimal.
func fastPathRefAmount(raw []byte) (decimal.Decimal, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return decimal.Zero, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return decimal.Zero, err
		}
		return fastPathRefDecimal(s)
	case raw[0] == '-' || isDigit(raw[0]):
		return fastPathRefDecimal(string(raw))
	}
	return decimal.Zero, ErrBadAmount
}

// fastPathRefMapText is ParseAmountMapText through encoding/json only.
func fastPathRefMapText(s string) (map[string]decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]decimal.Decimal{}, nil
	}
	return fastPathRefMapJSON([]byte(s))
}

// fastPathRefMapJSON is json.Unmarshal into an AmountMap with no fast path.
func fastPathRefMapJSON(data []byte) (map[string]decimal.Decimal, error) {
	var whole json.RawMessage
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, err
	}
	b := bytes.TrimSpace(whole)
	if string(b) == "null" || isEmptyArray(b) {
		return map[string]decimal.Decimal{}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]decimal.Decimal, len(raw))
	for k, v := range raw {
		d, err := fastPathRefAmount(v)
		if err != nil {
			return nil, err
		}
		out[k] = d
	}
	return out, nil
}

// sameDecimal reports whether a and b have the same coefficient and
// exponent, not only the same value: "3.20" and "3.2" differ.
func sameDecimal(a, b decimal.Decimal) bool {
	return a.Exponent() == b.Exponent() && a.Coefficient().Cmp(b.Coefficient()) == 0
}

func checkSameMaps(t *testing.T, in string, got, want map[string]decimal.Decimal, gotErr, wantErr error) {
	t.Helper()
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, reference error %v", in, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if got == nil || len(got) != len(want) {
		t.Fatalf("%q: got %v, reference %v", in, got, want)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !sameDecimal(g, w) {
			t.Fatalf("%q: key %q: got %v, reference %v", in, k, g, w)
		}
	}
}

var decimalSeeds = []string{
	"0", "-0", "+0", "3.20", "3.2", "-0.50", ".5", "-.5", "7.", "+7.", ".", "-", "",
	"null", " 1.5 ", "123456789012345678", "1234567890123456789", "0.000000000000000001",
	"99999999999999999.9", "1e5", "0E-8", "9.5187e+24", "1.2.3", "1..2", "--1", "+-1",
	"1_000", "0x10", "１", "\u22121", "00012.3400",
}

func TestParseDecimalFastPathMatchesGeneral(t *testing.T) {
	for _, s := range decimalSeeds {
		got, err := ParseDecimal(s)
		want, wantErr := fastPathRefDecimal(s)
		require.Equal(t, wantErr != nil, err != nil, "%q", s)
		if err == nil {
			assert.True(t, sameDecimal(got, want), "%q: got %v, want %v", s, got, want)
		}
	}
	d, ok := parsePlainDecimal("-0.50")
	require.True(t, ok)
	assert.Equal(t, int32(-2), d.Exponent())
	assert.Equal(t, int64(-50), d.Coefficient().Int64())
	_, ok = parsePlainDecimal("1234567890123456789")
	assert.False(t, ok, "19 digits take the general path")
}

func FuzzParseDecimalFastPath(f *testing.F) {
	for _, s := range decimalSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDecimal(s)
		want, wantErr := fastPathRefDecimal(s)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, reference error %v", s, err, wantErr)
		}
		if err == nil && !sameDecimal(got, want) {
			t.Fatalf("%q: got %v (exp %d), reference %v (exp %d)", s, got, got.Exponent(), want, want.Exponent())
		}
	})
}

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

func TestParseAmountMapTextFastPathMatchesJSON(t *testing.T) {
	for _, s := range amountMapSeeds {
		got, err := ParseAmountMapText(s)
		want, wantErr := fastPathRefMapText(s)
		checkSameMaps(t, s, got, want, err, wantErr)
	}
	// For text input the fast path is taken and needs no decoder.
	m, ok := parseFlatAmounts(`{"USD": "3.20", "EUR": 2.94, "JPY": null}`)
	require.True(t, ok)
	assert.Equal(t, "3.2", m["USD"].String())
	assert.Equal(t, "2.94", m["EUR"].String())
	assert.True(t, m["JPY"].IsZero())
	_, ok = parseFlatAmounts(`{"USD":01}`)
	assert.False(t, ok, "not JSON: left to encoding/json")
	_, ok = parseFlatAmounts(`{"a":"x","a":"1"}`)
	assert.False(t, ok, "a bad value is left to encoding/json")
}

func FuzzAmountMapFastPath(f *testing.F) {
	for _, s := range amountMapSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr := fastPathRefMapText(s)
		got, err := ParseAmountMapText(s)
		checkSameMaps(t, s, got, want, err, wantErr)

		var m AmountMap
		err = json.Unmarshal([]byte(s), &m)
		want, wantErr = fastPathRefMapJSON([]byte(s))
		checkSameMaps(t, s, m, want, err, wantErr)
	})
}

// checkValidAmountMapText holds for every text: ValidAmountMapText
// accepts what ParseAmountMapText accepts, as a string and as bytes, and
// the map of an accepted text is the one encoding/json reads.
func checkValidAmountMapText(t *testing.T, s string) {
	t.Helper()
	m, err := ParseAmountMapText(s)
	if got := ValidAmountMapText(s); got != (err == nil) {
		t.Fatalf("%q: ValidAmountMapText %v, ParseAmountMapText error %v", s, got, err)
	}
	if got := ValidAmountMapText([]byte(s)); got != (err == nil) {
		t.Fatalf("%q: ValidAmountMapText of bytes %v, ParseAmountMapText error %v", s, got, err)
	}
	if checkFlatAmounts(s) {
		want, wantErr := fastPathRefMapText(s)
		checkSameMaps(t, s, m, want, err, wantErr)
	}
}

func TestValidAmountMapTextMatchesParse(t *testing.T) {
	for _, s := range amountMapSeeds {
		checkValidAmountMapText(t, s)
	}
	assert.True(t, checkFlatAmounts(`{"USD": "3.20", "EUR": 2.94, "JPY": null}`), "the common shape is decided without parsing")
	assert.False(t, checkFlatAmounts(`{"USD":"1e3"}`), "an exponent is left to the parser")
	assert.False(t, checkFlatAmounts(`{"USD":"1234567890123456789"}`), "19 digits are left to the parser")
	assert.True(t, ValidAmountMapText(`{"USD":"1e3"}`))
	assert.False(t, ValidAmountMapText(`{"USD":"x"}`))
	assert.False(t, ValidAmountMapText(`USD:3`))
}

func TestValidAmountMapTextDoesNotAllocate(t *testing.T) {
	s := []byte(`{"USD": "3.20", "EUR": "2.94"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if !ValidAmountMapText(s) {
			t.Fatal("refused")
		}
	})
	assert.Zero(t, allocs)
}

func FuzzValidAmountMapText(f *testing.F) {
	for _, s := range amountMapSeeds {
		f.Add(s)
	}
	f.Fuzz(checkValidAmountMapText)
}
