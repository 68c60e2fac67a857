package cryptapi

import (
	"fmt"
	"regexp"
	"strings"
)

// keyMatcher finds the API key in text whatever spelling the text gives
// each of its characters, so that an answer that echoes the request (an
// error page, a JSON message, a gateway's HTML) cannot carry the key into
// an error, a log line or formatted output. Each character of the key may
// appear
//
//   - as itself (a space also as '+', as in a query string);
//   - percent-encoded, byte by byte, with upper- or lower-case hex, also
//     with the '%' itself encoded once more (%25, \u0025);
//   - as a JSON escape: \uXXXX in either case (a surrogate pair beyond
//     the BMP), or \/ \" \\ \b \f \n \r \t, with the backslash itself
//     escaped once more (a JSON string inside a JSON string);
//   - as an HTML character reference: &#NN; or &#xHH; (leading zeros
//     allowed), or &amp; &lt; &gt; &quot; &apos;, with the '&' itself
//     escaped (&amp;, %26, \u0026);
//
// and the characters of one key may mix spellings. The matcher is one
// regular expression (linear-time, RE2) built once per client; text
// without any escape character skips it.
type keyMatcher struct {
	key string
	re  *regexp.Regexp
	max int // longest text one spelling of the key can take
}

// Building blocks for the escape characters themselves.
const (
	reBackslash = `\\{1,2}`                             // JSON escape, or escaped once more
	rePercent   = `(?:%|%25|\\{1,2}u0025)`              // percent, or encoded once more
	reAmpersand = `(?:&|&amp;|%26|\\{1,2}u0026)`        // HTML reference start
	maxAmp      = len(`\\u0026`)                        // longest reAmpersand
	maxPct      = len(`\\u0025`) + 2                    // longest percent-encoded byte
	maxJSONU    = len(`\\u`) + 4                        // longest \uXXXX
	maxHTMLRef  = maxAmp + len("#x") + 8 + 6 + len(";") // &#x, up to 8 zeros, 6 hex digits
	escapeChars = `%\&+`                                // every spelling but the plain one uses one
)

// newKeyMatcher returns nil for no key; a nil matcher redacts nothing.
func newKeyMatcher(key string) *keyMatcher {
	if key == "" {
		return nil
	}
	var b strings.Builder
	max := 0
	for _, r := range key {
		alts, n := runeSpellings(r)
		b.WriteString("(?:" + strings.Join(alts, "|") + ")")
		max += n
	}
	return &keyMatcher{key: key, re: regexp.MustCompile(b.String()), max: max}
}

// runeSpellings returns the regular expressions of every spelling of r
// and the length of the longest.
func runeSpellings(r rune) ([]string, int) {
	raw := string(r)
	alts := []string{regexp.QuoteMeta(raw)}
	max := len(raw)
	if r == ' ' {
		alts = append(alts, `\+`)
	}
	// Percent-encoding of each UTF-8 byte.
	var pct strings.Builder
	for i := 0; i < len(raw); i++ {
		pct.WriteString(rePercent + hexClass(fmt.Sprintf("%02X", raw[i])))
	}
	alts = append(alts, pct.String())
	max = maxOf(max, maxPct*len(raw))
	// JSON \u escapes, UTF-16.
	if r <= 0xFFFF {
		alts = append(alts, reBackslash+"u"+hexClass(fmt.Sprintf("%04X", r)))
		max = maxOf(max, maxJSONU)
	} else {
		r -= 0x10000
		hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
		alts = append(alts, reBackslash+"u"+hexClass(fmt.Sprintf("%04X", hi))+reBackslash+"u"+hexClass(fmt.Sprintf("%04X", lo)))
		max = maxOf(max, 2*maxJSONU)
		r += 0x10000
	}
	if short, ok := jsonShort[r]; ok {
		alts = append(alts, reBackslash+short)
		max = maxOf(max, 2+len(short))
	}
	// HTML character references.
	alts = append(alts,
		reAmpersand+"#0{0,8}"+fmt.Sprint(r)+";",
		reAmpersand+"#[xX]0{0,8}"+hexClass(fmt.Sprintf("%X", r))+";")
	max = maxOf(max, maxHTMLRef)
	if name, ok := htmlNamed[r]; ok {
		alts = append(alts, reAmpersand+name+";")
		max = maxOf(max, maxAmp+len(name)+1)
	}
	return alts, max
}

// jsonShort are the two-character JSON escapes (after the backslash, as
// regular expressions); a backslash may itself be escaped once more.
var jsonShort = map[rune]string{
	'"': `"`, '/': `/`, '\\': `\\{1,2}`, '\b': `b`, '\f': `f`, '\n': `n`, '\r': `r`, '\t': `t`,
}

// htmlNamed are the named references HTML escapers use.
var htmlNamed = map[rune]string{'&': "amp", '<': "lt", '>': "gt", '"': "quot", '\'': "apos"}

// hexClass matches hex digits in either case.
func hexClass(h string) string {
	var b strings.Builder
	for _, c := range h {
		if c >= 'A' && c <= 'F' {
			b.WriteString("[" + string(c) + string(c+'a'-'A') + "]")
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func maxOf(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// redact replaces every spelling of the key in s with REDACTED.
func (m *keyMatcher) redact(s string) string {
	if m == nil {
		return s
	}
	if !strings.ContainsAny(s, escapeChars) {
		return strings.ReplaceAll(s, m.key, redacted)
	}
	return m.re.ReplaceAllLiteralString(s, redacted)
}

// maxLen is the longest text one spelling of the key can take.
func (m *keyMatcher) maxLen() int {
	if m == nil {
		return 0
	}
	return m.max
}
