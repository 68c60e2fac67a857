package cryptapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spellKey is the reference encoder of the redaction tests: it writes
// each character of key in a spelling chosen by rnd, among every one a
// body can hold (see keyMatcher).
func spellKey(key string, rnd *rand.Rand) string {
	var b strings.Builder
	for _, r := range key {
		b.WriteString(spellRune(r, rnd.IntN(12), rnd))
	}
	return b.String()
}

func caseHex(s string, rnd *rand.Rand) string {
	if rnd.IntN(2) == 0 {
		return strings.ToLower(s)
	}
	return s
}

func spellRune(r rune, how int, rnd *rand.Rand) string {
	raw := string(r)
	pct := func(prefix string) string {
		var b strings.Builder
		for i := 0; i < len(raw); i++ {
			b.WriteString(prefix + caseHex(fmt.Sprintf("%02X", raw[i]), rnd))
		}
		return b.String()
	}
	jsonU := func(bs string) string {
		if r > 0xFFFF {
			s := r - 0x10000
			return bs + "u" + caseHex(fmt.Sprintf("%04X", 0xD800+(s>>10)), rnd) + bs + "u" + caseHex(fmt.Sprintf("%04X", 0xDC00+(s&0x3FF)), rnd)
		}
		return bs + "u" + caseHex(fmt.Sprintf("%04X", r), rnd)
	}
	amp := []string{"&", "&amp;", "%26", `\u0026`}[rnd.IntN(4)]
	switch how {
	case 1:
		return pct("%")
	case 2:
		return pct([]string{"%25", `\u0025`}[rnd.IntN(2)])
	case 3:
		return jsonU(`\`)
	case 4:
		return jsonU(`\\`)
	case 5:
		if short, ok := map[rune]string{'"': `"`, '/': `/`, '\\': `\`, '\n': "n", '\t': "t"}[r]; ok {
			return `\` + short
		}
	case 6:
		return amp + "#" + strings.Repeat("0", rnd.IntN(3)) + fmt.Sprint(r) + ";"
	case 7:
		return amp + "#" + []string{"x", "X"}[rnd.IntN(2)] + caseHex(fmt.Sprintf("%X", r), rnd) + ";"
	case 8:
		if name, ok := htmlNamed[r]; ok {
			return amp + name + ";"
		}
	case 9:
		if r == ' ' {
			return "+"
		}
	case 10:
		if r < utf8.RuneSelf && r != ' ' { // what json.Marshal writes
			b, _ := json.Marshal(raw)
			return string(b[1 : len(b)-1])
		}
	}
	return raw
}

// TestRedactionMatchesEverySpelling: an error body holding the key in
// each spelling a service, a gateway or a proxy may give it (JSON escapes
// from Go and PHP encoders, percent-encoding, a query's '+', HTML
// references, an escape of an escape) comes back with the key replaced,
// and nothing else changed. The key holds characters that are special to
// regular expressions, URLs, JSON and HTML.
func TestRedactionMatchesEverySpelling(t *testing.T) {
	const key = `K9/f+Q2.x*W7 m&Z4<p>L'8"r(T)3[v]Y\6?n#H%1$s^D|5{g}J~0`
	goJSON, _ := json.Marshal(key)
	spellings := map[string]string{
		"raw":                      key,
		"Go json.Marshal":          string(goJSON[1 : len(goJSON)-1]),
		"PHP json_encode":          strings.ReplaceAll(string(goJSON[1:len(goJSON)-1]), "/", `\/`),
		"percent, upper":           urlEncodeAll(key, "%%%02X"),
		"percent, lower":           urlEncodeAll(key, "%%%02x"),
		"query escape":             queryEscape(key),
		"every char as \\u, lower": urlEncodeAll(key, `\u%04x`),
		"every char as \\u, upper": urlEncodeAll(key, `\u%04X`),
		"HTML decimal":             urlEncodeAll(key, "&#%d;"),
		"HTML hex":                 urlEncodeAll(key, "&#x%x;"),
		"JSON inside JSON":         strings.ReplaceAll(urlEncodeAll(key, `\u%04x`), `\`, `\\`),
		"percent twice":            strings.ReplaceAll(urlEncodeAll(key, "%%%02X"), "%", "%25"),
		"HTML inside Go JSON":      strings.ReplaceAll(urlEncodeAll(key, "&#%d;"), "&", `\u0026`),
	}
	for name, spelled := range spellings {
		t.Run(name, func(t *testing.T) {
			body := `{"status":"error","error":"bad key ` + spelled + ` given","echo":"` + spelled + `"}`
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, key, r.URL.Query().Get("apikey"), "the key reaches the service intact")
				writeBody(http.StatusUnauthorized, "application/json", []byte(body))(w, r)
			}))
			t.Cleanup(srv.Close)
			c, err := New(WithAPIKey(key), WithBaseURL(srv.URL), WithoutRetries())
			require.NoError(t, err)
			_, err = c.Info(context.Background(), "btc", nil)
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			want := `{"status":"error","error":"bad key ` + redacted + ` given","echo":"` + redacted + `"}`
			assert.Equal(t, want, string(ae.Body))
			if json.Valid([]byte(body)) {
				assert.Equal(t, "bad key "+redacted+" given", ae.Message)
			}
		})
	}
}

func urlEncodeAll(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

func queryEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ':
			b.WriteByte('+')
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "%%%02X", r)
		}
	}
	return b.String()
}

// TestRedactionAcrossTheExcerptCut: a key spelled at its longest that
// starts just before the excerpt ends is removed whole; no piece of it is
// kept.
func TestRedactionAcrossTheExcerptCut(t *testing.T) {
	spelled := strings.ReplaceAll(urlEncodeAll(testKey, `\u%04x`), `\`, `\\`)
	for _, before := range []int{maxExcerpt - 1, maxExcerpt - 30, maxExcerpt - len(spelled) + 3} {
		c, api := setupKey(t, WithoutRetries())
		prefix := strings.Repeat("x", before)
		api.handle("GET /btc/info/", serveBody(http.StatusBadGateway, "text/plain", []byte(prefix+spelled+strings.Repeat("y", 4000))))
		_, err := c.Info(context.Background(), "btc", nil)
		var ae *APIError
		require.ErrorAs(t, err, &ae)
		want := prefix + redacted + strings.Repeat("y", 4000)
		assert.Equal(t, want[:maxExcerpt], string(ae.Body), "key starting at %d", before)
	}
}

// FuzzRedactKey embeds a key, each character spelled at random by the
// reference encoder, in random text, and checks that the spelling is gone
// and REDACTED is there.
func FuzzRedactKey(f *testing.F) {
	f.Add("bbK9fQ2xW7mZ4pL8", "before ", " after", uint64(1))
	f.Add(`a/b&c<d>e'f"g h+i%j\k`, `{"e":"`, `"}`, uint64(7))
	f.Add("ключ🔑key", "", "", uint64(42))
	f.Add("%41%", "%", "41", uint64(3))
	f.Fuzz(func(t *testing.T, key, prefix, suffix string, seed uint64) {
		if !utf8.ValidString(key) || strings.TrimSpace(key) == "" || strings.IndexFunc(key, unicode.IsControl) >= 0 ||
			strings.Contains(key, redacted) || len(key) > 200 {
			t.Skip()
		}
		m := newKeyMatcher(key)
		rnd := rand.New(rand.NewPCG(seed, seed>>1))
		spelled := spellKey(key, rnd)
		out := m.redact(prefix + spelled + suffix)
		if strings.Contains(strings.ReplaceAll(out, redacted, "\x00"), spelled) {
			t.Fatalf("key %q spelled %q survives in %q", key, spelled, out)
		}
		if !strings.Contains(out, redacted) {
			t.Fatalf("no %s in %q (key %q spelled %q)", redacted, out, key, spelled)
		}
		if len(spelled) > m.maxLen() {
			t.Fatalf("spelling of %d bytes is longer than maxLen %d", len(spelled), m.maxLen())
		}
	})
}
