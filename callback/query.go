package callback

import (
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
)

// pair is one parameter of a query or of a form body: its key, unescaped,
// and its value as written, which text unescapes when esc is set.
type pair struct {
	key, val string
	esc      bool
}

// text returns the value unescaped. scanQuery has checked its escapes.
func (p pair) text() string {
	if !p.esc {
		return p.val
	}
	s, err := url.QueryUnescape(p.val)
	if err != nil {
		return "" // not reached: scanQuery refuses a bad escape
	}
	return s
}

// appendText appends the value unescaped to dst, without allocating when
// dst has room.
func (p pair) appendText(dst []byte) []byte {
	if !p.esc {
		return append(dst, p.val...)
	}
	s := p.val
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			dst = append(dst, ' ')
		case '%':
			if i+2 < len(s) {
				dst = append(dst, callbackurl.Unhex(s[i+1])<<4|callbackurl.Unhex(s[i+2]))
				i += 2
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stackPairs is how many parameters a parse keeps in an array on its
// stack before its slice of pairs moves to the heap.
const stackPairs = 32

// scanQuery appends the parameters of raw to dst, in order, and returns
// it: what callbackurl.ParseQuery reads from raw, as pairs, a key given
// twice being two pairs. ok is false exactly where ParseQuery fails: a
// ';', a malformed escape, or more parameters than url.ParseQuery takes.
// Values stay as written (see pair); a key is unescaped here. The pairs
// are in the order of the text.
func scanQuery(raw string, dst []pair) (_ []pair, ok bool) {
	return scanPairs(raw, dst, true)
}

// scanPairs is scanQuery; limit says whether to count the parameters
// against callbackurl.MaxQueryParams.
func scanPairs(raw string, dst []pair, limit bool) (_ []pair, ok bool) {
	if strings.IndexByte(raw, ';') >= 0 {
		return dst, false
	}
	// pct and plus are the offsets of the next '%' and '+' at or after the
	// current parameter, or len(raw).
	pct, plus := nextByte(raw, 0, '%'), nextByte(raw, 0, '+')
	base, params := len(dst), 1 // params counts '&' as url.ParseQuery does
	for start := 0; start < len(raw); {
		end := nextByte(raw, start, '&')
		if limit && end < len(raw) {
			if params++; params > callbackurl.MaxQueryParams {
				// More than url.ParseQuery reads by default: it applies
				// the limit in force (GODEBUG urlmaxqueryparams).
				if _, _, err := callbackurl.ParseQuery(raw); err != nil {
					return dst[:base], false
				}
				return scanPairs(raw, dst[:base], false)
			}
		}
		if end == start {
			start++
			continue
		}
		eq := start + strings.IndexByte(raw[start:end], '=')
		if eq < start {
			eq = end
		}
		keyEsc, valEsc := false, false
		if from := min(pct, plus); from < end {
			// One pass over the rest of the parameter, which has escapes.
			for i := from; i < end; i++ {
				switch raw[i] {
				case '%':
					if i+2 >= len(raw) || !callbackurl.IsHex(raw[i+1]) || !callbackurl.IsHex(raw[i+2]) {
						return dst, false
					}
					i += 2
				case '+':
				default:
					continue
				}
				if i < eq {
					keyEsc = true
				} else {
					valEsc = true
				}
			}
			if pct < end {
				pct = nextByte(raw, end, '%')
			}
			if plus < end {
				plus = nextByte(raw, end, '+')
			}
		}
		key := raw[start:eq]
		val := ""
		if eq < end {
			val = raw[eq+1 : end]
		}
		if keyEsc {
			key = pair{val: key, esc: true}.text()
		}
		dst = append(dst, pair{key: key, val: val, esc: valEsc})
		start = end + 1
	}
	return dst, true
}

// pairValues returns pairs as url.Values, values unescaped.
func pairValues(ps []pair) url.Values {
	out := make(url.Values, len(ps))
	for _, p := range ps {
		out[p.key] = append(out[p.key], p.text())
	}
	return out
}

// nextByte returns the offset of the first c in s at or after from, or
// len(s).
func nextByte(s string, from int, c byte) int {
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return len(s)
}
