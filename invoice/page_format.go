package invoice

import (
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// How the page writes numbers for a language. Every function keeps every
// digit of its input: only the decimal mark and the marks between groups
// of three digits change, so the value read back is the value written.
// The copy buttons and wallet links carry the plain machine value.

// number writes plain, a decimal in the form decimal.Decimal.String
// gives ("-1234.5600"), with the language's marks.
func (s *PageStrings) number(plain string) string {
	sign := ""
	if strings.HasPrefix(plain, "-") {
		sign, plain = "-", plain[1:]
	}
	whole, frac, hasFrac := strings.Cut(plain, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i := 0; i < len(whole); i++ {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(s.GroupMark)
		}
		b.WriteByte(whole[i])
	}
	if hasFrac {
		b.WriteString(s.DecimalMark)
		b.WriteString(frac)
	}
	return b.String()
}

// coinAmount writes an amount in the coin, every decimal kept: "0,00041667 BTC".
func (s *PageStrings) coinAmount(d decimal.Decimal, symbol string) string {
	return s.number(d.String()) + nbsp + symbol
}

// zeroDecimalCurrencies have no minor unit in use.
var zeroDecimalCurrencies = map[string]bool{"JPY": true, "KRW": true, "VND": true, "CLP": true, "ISK": true, "UGX": true, "PYG": true}

// currencySymbols are the symbols the languages use for the most common
// currencies, by primary language (CLDR); other currencies are written
// with their code.
var currencySymbols = map[string]map[string]string{
	"en": {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"},
	"de": {"USD": "$", "EUR": "€", "GBP": "£"},
	"fr": {"USD": "$US", "EUR": "€", "GBP": "£GB"},
	"es": {"USD": "US$", "EUR": "€"},
	"pt": {"USD": "US$", "EUR": "€", "GBP": "£", "BRL": "R$"},
	"it": {"EUR": "€", "GBP": "£"},
	"nl": {"USD": "US$", "EUR": "€", "GBP": "£"},
	"tr": {"USD": "$", "EUR": "€", "GBP": "£", "TRY": "₺"},
	"ru": {"USD": "$", "EUR": "€", "GBP": "£", "RUB": "₽"},
	"zh": {"USD": "US$", "EUR": "€", "GBP": "£", "CNY": "¥"},
	"ja": {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "￥"},
}

// currencyPlaces is how many decimals a fiat amount in currency shows.
func currencyPlaces(currency string) int32 {
	if zeroDecimalCurrencies[currency] {
		return 0
	}
	return 2
}

// money writes a fiat amount, rounded to the currency's minor unit, with
// the language's symbol for the currency where it has one ("$25.00",
// "25,00 €"), else with the code ("25.00 CAD").
func (s *PageStrings) money(d decimal.Decimal, currency string) string {
	n := s.number(d.StringFixed(currencyPlaces(currency)))
	if sym := currencySymbols[primary(s.Lang)][currency]; sym != "" && s.MoneyFormat != "" {
		return fill(s.MoneyFormat, "{symbol}", sym, "{amount}", n)
	}
	return n + nbsp + currency
}

// percent writes n percent: "40%", "40 %", "%40".
func (s *PageStrings) percent(n int) string {
	return strings.ReplaceAll(s.PercentFormat, "{n}", strconv.Itoa(n))
}

// date writes t in UTC in the language's numeric form, with "UTC": the
// page's script writes it again in the customer's own time zone.
func (s *PageStrings) date(t time.Time) string {
	t = t.UTC()
	two := func(n int) string { return strconv.Itoa(n/10) + strconv.Itoa(n%10) }
	return fill(s.DateFormat, "{year}", strconv.Itoa(t.Year()), "{month}", two(int(t.Month())), "{day}", two(t.Day()),
		"{time}", two(t.Hour())+":"+two(t.Minute())+" UTC")
}
