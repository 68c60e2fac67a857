package invoice

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readNumber reads back what number wrote in the language s.
func readNumber(s *PageStrings, text string) string {
	text = strings.ReplaceAll(text, s.GroupMark, "")
	return strings.Replace(text, s.DecimalMark, ".", 1)
}

func TestPageNumbersKeepTheirValue(t *testing.T) {
	for _, s := range builtinStrings {
		for _, x := range []string{"0", "1", "0.00041667", "15", "1234.5", "-1234567.891", "1000", "999",
			"123456789012345678901234567890.123456789012345678", "0.000000000000000001"} {
			d := decimal.RequireFromString(x)
			text := s.number(d.String())
			assert.Equal(t, d.String(), readNumber(&s, text), "%s %s → %q", s.Lang, x, text)
			assert.True(t, decimal.RequireFromString(readNumber(&s, text)).Equal(d))
		}
	}
	de, _ := PageStringsFor("de")
	assert.Equal(t, "1.234.567,891", de.number("1234567.891"))
	assert.Equal(t, "0,00041667\u00a0BTC", de.coinAmount(decimal.RequireFromString("0.00041667"), "BTC"))
	assert.Equal(t, "1.234,50\u00a0€", de.money(decimal.RequireFromString("1234.5"), "EUR"))
	assert.Equal(t, "25,00\u00a0CAD", de.money(decimal.RequireFromString("25"), "CAD"))
	assert.Equal(t, "40\u00a0%", de.percent(40))
	en := DefaultPageStrings()
	assert.Equal(t, "$1,234.50", en.money(decimal.RequireFromString("1234.499"), "USD"), "fiat rounds to cents")
	assert.Equal(t, "¥1,235", en.money(decimal.RequireFromString("1234.5"), "JPY"), "no minor unit")
	assert.Equal(t, "12.00 CHF", en.money(decimal.RequireFromString("12"), "CHF"), "a code where the language has no symbol")
	tr, _ := PageStringsFor("tr")
	assert.Equal(t, "%40", tr.percent(40))
	ja, _ := PageStringsFor("ja")
	assert.Equal(t, "￥1,235", ja.money(decimal.RequireFromString("1234.5"), "JPY"))
}

// FuzzPageNumber: whatever the decimal, every language writes it so that
// it reads back to the same value, with every digit.
func FuzzPageNumber(f *testing.F) {
	for _, s := range []string{"0", "-0.5", "1234567.00100", "9.5187e+24", "0E-8", "1e-30", "123456789012345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, err := decimal.NewFromString(in)
		if err != nil || len(in) > 200 {
			return
		}
		plain := d.String()
		for _, s := range builtinStrings {
			text := s.number(plain)
			require.Equal(t, plain, readNumber(&s, text), "%s %q → %q", s.Lang, in, text)
			require.Equal(t, strings.Count(plain, "0")+strings.Count(plain, "5"), strings.Count(text, "0")+strings.Count(text, "5"), "every digit kept")
		}
	})
}
