package cryptapitest

import "strings"

// escapeURLText percent-encodes the bytes of a URL that cannot travel in
// a request line as they are: non-ASCII bytes (UTF-8 text), controls,
// spaces and DEL. Everything else, existing escapes included, is kept, so
// the result is the URL as it goes out on the wire, and the text a
// callback's signature must cover.
func escapeURLText(s string) string {
	const hex = "0123456789ABCDEF"
	need := false
	for i := 0; i < len(s); i++ {
		if b := s[i]; b <= ' ' || b >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= ' ' || b >= 0x7f {
			sb.WriteByte('%')
			sb.WriteByte(hex[b>>4])
			sb.WriteByte(hex[b&15])
			continue
		}
		sb.WriteByte(b)
	}
	return sb.String()
}
