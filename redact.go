package cryptapi

import (
	"errors"
	"net/url"
	"slices"
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
// and the characters of one key may mix spellings. The matcher walks the
// text once; at each byte that can start a spelling of the key's first
// character it follows every spelling of each character in turn (a small
// set of positions, never backtracking), so it costs little more than a
// substring search, and text without any escape character is searched
// for the plain key only.
type keyMatcher struct {
	key   string
	runes []rune
	raws  []string
	first [256]bool // bytes a spelling of the first character can start with
	max   int       // longest text one spelling of the key can take
}

// Longest spellings, for maxLen.
const (
	maxEsc      = 2                         // a backslash, escaped once more
	maxPct      = maxEsc + len("u0025") + 2 // \\u0025 and two hex digits, per byte
	maxJSONU    = maxEsc + len("u") + 4     // \\uXXXX
	maxAmp      = maxEsc + len("u0026")     // \\u0026
	maxRefDigit = 16                        // digits of &#...; with leading zeros
	maxHTMLRef  = maxAmp + len("#x") + maxRefDigit + len(";")
	escapeChars = `%\&+` // every spelling but the plain one uses one
)

// newKeyMatcher returns nil for no key; a nil matcher redacts nothing.
func newKeyMatcher(key string) *keyMatcher {
	if key == "" {
		return nil
	}
	m := &keyMatcher{key: key}
	for _, r := range key {
		m.runes = append(m.runes, r)
		m.raws = append(m.raws, string(r))
		n := maxOf(maxOf(len(string(r)), maxPct*len(string(r))), maxHTMLRef)
		if r > 0xFFFF {
			n = maxOf(n, 2*maxJSONU)
		}
		m.max += n
	}
	m.first[m.raws[0][0]] = true
	for _, c := range []byte(escapeChars) {
		m.first[c] = true
	}
	return m
}

// redact replaces every spelling of the key in s with REDACTED.
func (m *keyMatcher) redact(s string) string {
	if m == nil {
		return s
	}
	if !strings.ContainsAny(s, escapeChars) {
		return strings.ReplaceAll(s, m.key, redacted)
	}
	var b strings.Builder
	done := 0
	for p := 0; p < len(s); p++ {
		if !m.first[s[p]] {
			continue
		}
		if end := m.matchAt(s, p); end > p {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[done:p])
			b.WriteString(redacted)
			done = end
			p = end - 1
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// matchAt returns the end of the longest spelling of the key starting at
// p, or -1.
func (m *keyMatcher) matchAt(s string, p int) int {
	cur := []int{p}
	var next []int
	for i, r := range m.runes {
		next = next[:0]
		for _, q := range cur {
			next = m.spellings(s, q, r, m.raws[i], next)
		}
		if len(next) == 0 {
			return -1
		}
		cur, next = dedupe(next), cur
	}
	end := -1
	for _, q := range cur {
		end = maxOf(end, q)
	}
	return end
}

func dedupe(ps []int) []int {
	out := ps[:0]
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// spellings appends to out the end of every spelling of r at s[p:].
func (m *keyMatcher) spellings(s string, p int, r rune, raw string, out []int) []int {
	if strings.HasPrefix(s[p:], raw) {
		out = append(out, p+len(raw))
	}
	if p >= len(s) {
		return out
	}
	switch s[p] {
	case '+':
		if r == ' ' {
			out = append(out, p+1)
		}
	case '\\':
		if r == '\\' { // a backslash escaped in JSON, or in JSON inside JSON
			for _, esc := range []string{`\\`, `\\\\`} {
				if strings.HasPrefix(s[p:], esc) {
					out = append(out, p+len(esc))
				}
			}
		}
	}
	switch s[p] {
	case '%', '\\':
		out = percentSpellings(s, p, raw, out)
		for _, q := range escapes(s, p) {
			out = jsonSpellings(s, q, r, out)
		}
	}
	if s[p] == '&' || s[p] == '%' || s[p] == '\\' {
		out = htmlSpellings(s, p, r, out)
	}
	return out
}

// escapes returns where a JSON escape's letter starts after one backslash
// or two (an escaped backslash, in JSON inside JSON).
func escapes(s string, p int) []int {
	switch {
	case strings.HasPrefix(s[p:], `\\`):
		return []int{p + 1, p + 2}
	case strings.HasPrefix(s[p:], `\`):
		return []int{p + 1}
	}
	return nil
}

// percentSpellings: every byte of raw as %HH, with the percent sign
// itself plain, encoded again (%25) or JSON-escaped.
func percentSpellings(s string, p int, raw string, out []int) []int {
	cur := []int{p}
	for i := 0; i < len(raw); i++ {
		var next []int
		for _, q := range cur {
			for _, h := range afterEscaped(s, q, '%', "%25", "u0025") {
				if v, ok := hexAt(s, h, 2); ok && v == rune(raw[i]) {
					next = append(next, h+2)
				}
			}
		}
		if len(next) == 0 {
			return out
		}
		cur = next
	}
	return append(out, cur...)
}

// afterEscaped returns the positions after c at s[p:], spelled plainly,
// as alt, or as a JSON \u escape (one backslash or two).
func afterEscaped(s string, p int, c byte, alt, jsonU string) []int {
	var out []int
	if p < len(s) && s[p] == c {
		out = append(out, p+1)
	}
	if alt != "" && strings.HasPrefix(s[p:], alt) {
		out = append(out, p+len(alt))
	}
	for _, q := range escapes(s, p) {
		if strings.HasPrefix(s[q:], jsonU) {
			out = append(out, q+len(jsonU))
		}
	}
	return out
}

// jsonSpellings: at q, after a backslash: uXXXX (a surrogate pair beyond
// the BMP) or a two-character escape.
func jsonSpellings(s string, q int, r rune, out []int) []int {
	if q >= len(s) {
		return out
	}
	if s[q] == 'u' {
		v, ok := hexAt(s, q+1, 4)
		switch {
		case ok && r <= 0xFFFF && v == r:
			out = append(out, q+5)
		case ok && r > 0xFFFF && v == 0xD800+((r-0x10000)>>10):
			for _, q2 := range escapes(s, q+5) {
				if q2 < len(s) && s[q2] == 'u' {
					if lo, ok := hexAt(s, q2+1, 4); ok && lo == 0xDC00+((r-0x10000)&0x3FF) {
						out = append(out, q2+5)
					}
				}
			}
		}
		return out
	}
	if short, ok := jsonShort[r]; ok && s[q] == short {
		out = append(out, q+1)
	}
	return out
}

// jsonShort are the two-character JSON escapes, by the character they
// stand for.
var jsonShort = map[rune]byte{'"': '"', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// htmlNamed are the named references HTML escapers use.
var htmlNamed = map[rune]string{'&': "amp", '<': "lt", '>': "gt", '"': "quot", '\'': "apos"}

// htmlSpellings: &#N; &#xH; or a named reference, the '&' plain, as
// &amp;, %26 or a JSON \u0026.
func htmlSpellings(s string, p int, r rune, out []int) []int {
	for _, q := range afterEscaped(s, p, '&', "%26", "u0026") {
		if strings.HasPrefix(s[q:], "amp;") {
			// &amp;#39; is an escaped '&' followed by #39;
			out = htmlRef(s, q+4, r, out)
		}
		out = htmlRef(s, q, r, out)
	}
	return out
}

func htmlRef(s string, q int, r rune, out []int) []int {
	if name, ok := htmlNamed[r]; ok && strings.HasPrefix(s[q:], name+";") {
		out = append(out, q+len(name)+1)
	}
	if q >= len(s) || s[q] != '#' {
		return out
	}
	q++
	base := 10
	if q < len(s) && (s[q] == 'x' || s[q] == 'X') {
		base = 16
		q++
	}
	v, n := rune(0), 0
	for q+n < len(s) && n < maxRefDigit {
		d := hexDigit(s[q+n])
		if d < 0 || d >= base {
			break
		}
		v = v*rune(base) + rune(d)
		n++
	}
	if n > 0 && v == r && q+n < len(s) && s[q+n] == ';' {
		out = append(out, q+n+1)
	}
	return out
}

// hexAt reads n hex digits (either case) at s[p:].
func hexAt(s string, p, n int) (rune, bool) {
	if p < 0 || p+n > len(s) {
		return 0, false
	}
	var v rune
	for i := 0; i < n; i++ {
		d := hexDigit(s[p+i])
		if d < 0 {
			return 0, false
		}
		v = v<<4 | rune(d)
	}
	return v, true
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func maxOf(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// maxLen is the longest text one spelling of the key can take.
func (m *keyMatcher) maxLen() int {
	if m == nil {
		return 0
	}
	return m.max
}

const redacted = "REDACTED"

// redactText removes every spelling of the API key from s (see
// keyMatcher).
func (c *Client) redactText(s string) string { return c.keyMatch.redact(s) }

// redactURL returns u as text with the apikey parameter replaced.
func (c *Client) redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	cp := *u
	q := cp.Query()
	if q.Has("apikey") {
		q.Set("apikey", redacted)
		cp.RawQuery = q.Encode()
	}
	cp.User = nil
	return c.redactText(cp.String())
}

// scrub rewrites errors that can carry the request URL (net/http's
// *url.Error) so that the API key cannot reach an error string, a log line
// or *url.Error.URL.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		clean := ue.URL
		if p, perr := url.Parse(ue.URL); perr == nil {
			clean = c.redactURL(p)
		}
		inner := ue.Err
		if inner != nil {
			if msg := inner.Error(); c.redactText(msg) != msg {
				inner = redactedError{msg: c.redactText(msg), err: inner}
			}
		}
		return &url.Error{Op: ue.Op, URL: c.redactText(clean), Err: inner}
	}
	if msg := err.Error(); c.redactText(msg) != msg {
		return redactedError{msg: c.redactText(msg), err: err}
	}
	return err
}

// redactedError carries a message with the key removed. It does not unwrap
// (the original text holds the key), but errors.Is still matches the
// original chain, so sentinels such as context.DeadlineExceeded are found.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }

func (e redactedError) Is(target error) bool {
	return e.err != nil && errors.Is(e.err, target)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// excerpt is a bounded copy of an answer with the API key removed. The key
// is removed from a window longer than the excerpt by the longest spelling
// of the key, and the result is cut afterwards: a key that starts before
// the cut lies wholly inside the window, so no piece of it can remain.
func (c *Client) excerpt(data []byte) []byte {
	window := maxExcerpt + c.keyMatch.maxLen()
	if len(data) > window {
		data = data[:window]
	}
	out := []byte(c.redactText(string(data)))
	if len(out) > maxExcerpt {
		out = out[:maxExcerpt]
	}
	return out
}
