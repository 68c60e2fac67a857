package invoice_test

import (
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// pageLanguages are the built-in translations the page promises.
var pageLanguages = []string{"en", "de", "fr", "es", "pt", "it", "nl", "tr", "ru", "zh", "ja"}

// sameAsEnglish are the fields a translation may leave as in English:
// formats that are not words, and words the language spells the same.
var sameAsEnglish = map[string]bool{
	"DecimalMark": true, "GroupMark": true, "PercentFormat": true, "MoneyFormat": true, "DateFormat": true,
	"FiatLabel":    true,
	"fr.DateLabel": true, "fr.TxLabel": true,
}

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

func placeholders(s string) []string {
	p := placeholder.FindAllString(s, -1)
	sort.Strings(p)
	return p
}

// Every built-in language has every text, translated (not the English
// one), with the same placeholders as the English one, and no text has
// markup or stray spaces.
func TestPageStringsEveryLanguageIsComplete(t *testing.T) {
	en, ok := invoice.PageStringsFor("en")
	require.True(t, ok)
	assert.Equal(t, invoice.DefaultPageStrings(), en)
	ev := reflect.ValueOf(en)
	seen := map[string]bool{}
	for _, lang := range pageLanguages {
		s, ok := invoice.PageStringsFor(lang)
		require.True(t, ok, lang)
		assert.True(t, strings.HasPrefix(strings.ToLower(s.Lang), lang), "%s: Lang %q", lang, s.Lang)
		assert.False(t, seen[s.Lang], "%s twice", s.Lang)
		seen[s.Lang] = true
		v := reflect.ValueOf(s)
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			if v.Field(i).Kind() != reflect.String {
				t.Errorf("%s: field %s is not text", lang, name)
				continue
			}
			text, english := v.Field(i).String(), ev.Field(i).String()
			if !assert.NotEmpty(t, text, "%s: %s is missing", lang, name) {
				continue
			}
			if lang != "en" && !sameAsEnglish[name] && !sameAsEnglish[lang+"."+name] {
				assert.NotEqual(t, english, text, "%s: %s is not translated", lang, name)
			}
			assert.Equal(t, placeholders(english), placeholders(text), "%s: %s has other placeholders: %q", lang, name, text)
			if name != "GroupMark" {
				assert.Equal(t, strings.TrimSpace(text), text, "%s: %s: spaces around", lang, name)
			}
			assert.NotContains(t, text, "  ", "%s: %s: double space", lang, name)
			assert.NotRegexp(t, `[<>]`, text, "%s: %s: markup", lang, name)
		}
	}
	assert.Len(t, seen, len(pageLanguages))

	for tag, want := range map[string]string{"de-CH": "de", "pt": "pt-BR", "pt-PT": "pt-BR", "zh-Hant-TW": "zh-CN", "JA": "ja", "en_GB": "en"} {
		s, ok := invoice.PageStringsFor(tag)
		assert.True(t, ok, tag)
		assert.Equal(t, want, s.Lang, tag)
	}
	for _, tag := range []string{"", "xx", "e", "<script>", "de;q=1", "*"} {
		_, ok := invoice.PageStringsFor(tag)
		assert.False(t, ok, tag)
	}
}

// The language: the lang parameter (the page's switch), else the
// browser's Accept-Language by quality, else the default; the same for
// the page, its status and the switch's links.
func TestPageLanguageFromTheSwitchAndAcceptLanguage(t *testing.T) {
	e, _, ts := pageEnv(t)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("1234.5"), Currency: "EUR"})
	lang := regexp.MustCompile(`<html lang="([^"]*)">`)
	for _, tc := range []struct{ query, accept, want string }{
		{"", "", "en"},
		{"", "de-DE,de;q=0.9,en;q=0.8", "de"},
		{"", "fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5", "fr"},
		{"", "en;q=0.2, ja;q=0.8", "ja"},
		{"", "xx, pt-PT;q=0.5", "pt-BR"},
		{"", "zh-TW", "zh-CN"},
		{"", "de;q=0, es;q=0.1", "es"},
		{"", "de;q=abc, it", "it"},
		{"", "*", "en"},
		{"", strings.Repeat("xx-YY;q=0.9, ", 2000) + "de", "en"},
		{"?lang=ru", "de", "ru"},
		{"?lang=nl-BE", "", "nl"},
		{"?lang=tr&lang=de", "", "tr"},
		{"?lang=%3Cscript%3Ealert(1)%3C/script%3E", "ja", "ja"},
		{"?lang=de%22%20onmouseover=%22alert(1)", "", "en"},
		{"?lang=klingon", "", "en"},
	} {
		h := http.Header{}
		if tc.accept != "" {
			h.Set("Accept-Language", tc.accept)
		}
		resp, body := getWith(t, ts.URL+"/pay/"+inv.ID+tc.query, h)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		m := lang.FindStringSubmatch(string(body))
		require.NotNil(t, m)
		assert.Equal(t, tc.want, m[1], "%q %q", tc.query, tc.accept)
		assert.Contains(t, resp.Header.Get("Vary"), "Accept-Language")
		assert.NotContains(t, string(body), "alert(1)", "the parameter is never written back")
		v := statusWith(t, ts.URL+"/pay/"+inv.ID+"/status"+tc.query, h)
		assert.Equal(t, tc.want, v.Lang, "%q %q: the status speaks the page's language", tc.query, tc.accept)
		// The page's own status link names its language, whatever the
		// browser sends later.
		assert.Contains(t, string(body), `data-status-url="`+inv.ID+`/status?lang=`+strings.ToLower(tc.want[:2])+`"`)
	}

	// Numbers and amounts for the language, with their value: the copy
	// button and the wallet link carry the machine value.
	_, body := get(t, ts.URL+"/pay/"+inv.ID+"?lang=de")
	page := string(body)
	assert.Contains(t, page, ">1.234,50\u00a0€<")
	due := inv.Due.String()
	assert.Contains(t, page, `>`+strings.Replace(due, ".", ",", 1)+`<`)
	assert.Contains(t, page, `data-copy-value="`+due+`"`)
	assert.Contains(t, page, `href="`+inv.PaymentURI+`"`)
	_, body = get(t, ts.URL+"/pay/"+inv.ID+"?lang=fr")
	assert.Contains(t, string(body), ">1\u202f234,50\u00a0€<")
	_, body = get(t, ts.URL+"/pay/"+inv.ID+"?lang=en")
	assert.Contains(t, string(body), ">€1,234.50<")

	// The switch: every language, by its own name, as a link that works
	// without a script; the current one marked.
	_, body = get(t, ts.URL+"/pay/"+inv.ID+"?lang=ja")
	links := regexp.MustCompile(`<a href="\?lang=([a-z]+)" lang="([^"]+)" hreflang="[^"]+"( aria-current="true")?>([^<]+)</a>`).FindAllStringSubmatch(string(body), -1)
	require.Len(t, links, len(pageLanguages))
	for i, l := range links {
		assert.Equal(t, pageLanguages[i], l[1])
		s, _ := invoice.PageStringsFor(l[1])
		assert.Equal(t, s.LangName, l[4])
		assert.Equal(t, l[1] == "ja", l[3] != "", l[1])
	}
}

func statusWith(t *testing.T, url string, h http.Header) invoice.PageView {
	t.Helper()
	return decodeView(t, url, h)
}

// WithPageStrings changes a built-in language or adds one;
// WithDefaultLanguage picks the language for browsers that ask for none
// the page has.
func TestPageStringsAddALanguageAndSetTheDefault(t *testing.T) {
	e, _, ts := pageEnv(t,
		invoice.WithPageStrings(invoice.PageStrings{Lang: "pl", LangName: "Polski", New: "Czekamy na płatność"}),
		invoice.WithPageStrings(invoice.PageStrings{Lang: "x<y", New: "broken"}),
		invoice.WithPageStrings(invoice.PageStrings{Lang: "fr", DecimalMark: "5", New: "broken"}),
		invoice.WithPageStrings(invoice.PageStrings{Lang: "it", GroupMark: ",", New: "broken"}),
		invoice.WithDefaultLanguage("de"),
	)
	inv := e.Create(invoice.CreateOptions{Price: invoicesuite.D("0.001")})
	_, body := getWith(t, ts.URL+"/pay/"+inv.ID, http.Header{"Accept-Language": {"pl-PL"}})
	page := string(body)
	assert.Contains(t, page, `<html lang="pl">`)
	assert.Contains(t, page, ">Czekamy na płatność<")
	assert.Contains(t, page, ">Send exactly<", "what is not translated is English")
	assert.Contains(t, page, `<a href="?lang=pl" lang="pl" hreflang="pl" aria-current="true">Polski</a>`)
	assert.NotContains(t, page, "broken", "a Lang that is not a tag is refused")
	for _, lang := range []string{"fr", "it"} {
		_, body = get(t, ts.URL+"/pay/"+inv.ID+"?lang="+lang)
		assert.NotContains(t, string(body), "broken", "%s: marks that change numbers are refused", lang)
	}
	_, body = getWith(t, ts.URL+"/pay/"+inv.ID, http.Header{"Accept-Language": {"sv"}})
	assert.Contains(t, string(body), `<html lang="de">`, "the default")
}
