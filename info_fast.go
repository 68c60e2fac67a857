package cryptapi

import (
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/forwardpay/cryptapi-go/internal/wire"
)

// fastCoins decodes the all-coins object in one pass over b, without
// encoding/json: it finds each value's bytes and hands them to the same
// decoders (wire.Amount, wire.AmountMap, wire.String, wire.Time) that
// encoding/json calls in plainCoins, so each field decodes the same way.
// ok is false for anything outside the shape the service sends, which then
// goes through plainCoins: strings with escapes or non-ASCII bytes, keys
// that differ from a field name only in case, repeated keys, two keys for
// one ticker, a null where plainCoins would leave a field unset, nesting
// deeper than maxFastDepth, an answer saying "status":"error", any value
// a field decoder refuses, and any invalid JSON. FuzzCoinsFastMatchesPlain
// checks that whenever ok is true, plainCoins gives the same Coins.
func fastCoins(b []byte) (Coins, bool) {
	p := fastParser{b: b}
	i := p.ws(0)
	if !p.at(i, '{') {
		return nil, false
	}
	out := make(Coins, 64)
	seen := make(map[string]struct{}, 64)
	claim := func(key string) bool {
		if _, dup := seen[key]; dup {
			return false
		}
		seen[key] = struct{}{}
		return true
	}
	i = p.ws(i + 1)
	if p.at(i, '}') {
		return out, p.ws(i+1) == len(b)
	}
	for {
		key, j, ok := p.key(i)
		if !ok {
			return nil, false
		}
		i = j
		start := i
		isObj := p.at(i, '{')
		if key == "status" && p.at(i, '"') {
			end, ok := p.str(i)
			if !ok || strings.EqualFold(string(b[i+1:end-1]), "error") {
				return nil, false
			}
		}
		tk, terr := ticker.Parse(key)
		switch {
		case terr != nil || !isObj:
			if terr == nil && !claim(tk.Key()) {
				return nil, false
			}
			if i, ok = p.value(i, 0); !ok {
				return nil, false
			}
		default:
			if !claim(tk.Key()) {
				return nil, false
			}
			if p.firstValueIsObject(start) {
				if i, ok = p.network(start, key, out, claim); !ok {
					return nil, false
				}
			} else {
				var w coinInfoWire
				if i, ok = p.record(start, &w); !ok || !w.isRecord() {
					// Not a record: plainCoins would read it as a network.
					return nil, false
				}
				addCoin(out, tk.Key(), &w)
			}
		}
		i = p.ws(i)
		if p.at(i, ',') {
			i = p.ws(i + 1)
			continue
		}
		if p.at(i, '}') {
			return out, p.ws(i+1) == len(b)
		}
		return nil, false
	}
}

// maxFastDepth bounds the nesting fastParser follows in skipped values.
const maxFastDepth = 32

// fastParser scans a restricted JSON: strings must be plain (printable
// ASCII without escapes); everything else is reported as not ok.
type fastParser struct{ b []byte }

func (p *fastParser) at(i int, c byte) bool { return i < len(p.b) && p.b[i] == c }

func (p *fastParser) ws(i int) int {
	for i < len(p.b) && (p.b[i] == ' ' || p.b[i] == '\t' || p.b[i] == '\n' || p.b[i] == '\r') {
		i++
	}
	return i
}

// str returns the end (after the closing quote) of the plain string at i.
func (p *fastParser) str(i int) (int, bool) {
	if !p.at(i, '"') {
		return 0, false
	}
	for i++; i < len(p.b); i++ {
		c := p.b[i]
		if c == '"' {
			return i + 1, true
		}
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return 0, false
		}
	}
	return 0, false
}

// key reads `"key" :` at i and returns the key and the start of the value.
func (p *fastParser) key(i int) (string, int, bool) {
	k, j, ok := p.keyBytes(i)
	return string(k), j, ok
}

// keyBytes is key without a copy: the key's bytes are a part of p.b.
func (p *fastParser) keyBytes(i int) ([]byte, int, bool) {
	end, ok := p.str(i)
	if !ok {
		return nil, 0, false
	}
	j := p.ws(end)
	if !p.at(j, ':') {
		return nil, 0, false
	}
	return p.b[i+1 : end-1], p.ws(j + 1), true
}

// number returns the end of the JSON number at i.
func (p *fastParser) number(i int) (int, bool) {
	b := p.b
	if p.at(i, '-') {
		i++
	}
	switch {
	case p.at(i, '0'):
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigitByte(b[i]) {
			i++
		}
	default:
		return 0, false
	}
	if p.at(i, '.') {
		i++
		if i >= len(b) || !isDigitByte(b[i]) {
			return 0, false
		}
		for i < len(b) && isDigitByte(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigitByte(b[i]) {
			return 0, false
		}
		for i < len(b) && isDigitByte(b[i]) {
			i++
		}
	}
	return i, true
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// value returns the end of the JSON value at i, checking its syntax.
func (p *fastParser) value(i, depth int) (int, bool) {
	if i >= len(p.b) || depth > maxFastDepth {
		return 0, false
	}
	switch c := p.b[i]; {
	case c == '"':
		return p.str(i)
	case c == '-' || isDigitByte(c):
		return p.number(i)
	case c == 't':
		return p.literal(i, "true")
	case c == 'f':
		return p.literal(i, "false")
	case c == 'n':
		return p.literal(i, "null")
	case c == '{':
		i = p.ws(i + 1)
		if p.at(i, '}') {
			return i + 1, true
		}
		for {
			_, j, ok := p.key(i)
			if !ok {
				return 0, false
			}
			if i, ok = p.value(j, depth+1); !ok {
				return 0, false
			}
			i = p.ws(i)
			if p.at(i, ',') {
				i = p.ws(i + 1)
				continue
			}
			if p.at(i, '}') {
				return i + 1, true
			}
			return 0, false
		}
	case c == '[':
		i = p.ws(i + 1)
		if p.at(i, ']') {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = p.value(i, depth+1); !ok {
				return 0, false
			}
			i = p.ws(i)
			if p.at(i, ',') {
				i = p.ws(i + 1)
				continue
			}
			if p.at(i, ']') {
				return i + 1, true
			}
			return 0, false
		}
	}
	return 0, false
}

func (p *fastParser) literal(i int, lit string) (int, bool) {
	if len(p.b)-i >= len(lit) && string(p.b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// firstValueIsObject reports whether the object at i starts with a member
// whose value is an object (a network of tokens).
func (p *fastParser) firstValueIsObject(i int) bool {
	i = p.ws(i + 1)
	if p.at(i, '}') {
		return false
	}
	_, j, ok := p.key(i)
	return ok && p.at(j, '{')
}

// network reads the object at i as a network of token records, adding
// each record to out; it is not ok when no token was a record.
func (p *fastParser) network(i int, network string, out Coins, claim func(string) bool) (int, bool) {
	found := false
	i = p.ws(i + 1)
	for {
		tok, j, ok := p.key(i)
		if !ok {
			return 0, false
		}
		i = j
		t, terr := ticker.Parse(network + "_" + tok)
		if terr == nil && !claim(t.Key()) {
			return 0, false
		}
		if terr != nil || !p.at(i, '{') {
			if i, ok = p.value(i, 1); !ok {
				return 0, false
			}
		} else {
			var w coinInfoWire
			if i, ok = p.record(i, &w); !ok {
				return 0, false
			}
			if w.isRecord() {
				addCoin(out, t.Key(), &w)
				found = true
			}
		}
		i = p.ws(i)
		if p.at(i, ',') {
			i = p.ws(i + 1)
			continue
		}
		if p.at(i, '}') {
			return i + 1, found
		}
		return 0, false
	}
}

// coinFields are the keys coinInfoWire decodes, in its field order.
var coinFields = [...]string{
	"coin", "ticker", "minimum_transaction", "minimum_transaction_coin", "minimum_fee",
	"minimum_fee_coin", "fee_percent", "network_fee_estimation", "prices", "prices_updated", "status", "logo",
}

// record reads the object at i into w with the decoders encoding/json
// would call for each field.
func (p *fastParser) record(i int, w *coinInfoWire) (int, bool) {
	var set uint16
	i = p.ws(i + 1)
	if p.at(i, '}') {
		return i + 1, true
	}
	for {
		key, j, ok := p.key(i)
		if !ok {
			return 0, false
		}
		end, ok := p.value(j, 1)
		if !ok {
			return 0, false
		}
		raw := p.b[j:end]
		field := -1
		for f, name := range coinFields {
			if key == name {
				field = f
				break
			}
		}
		if field < 0 {
			for _, name := range coinFields {
				if len(key) == len(name) && strings.EqualFold(key, name) {
					return 0, false // encoding/json would match it
				}
			}
		} else {
			if set&(1<<field) != 0 || (raw[0] == 'n' && (field == 0 || field == 2 || field == 3)) {
				return 0, false // repeated, or a null pointer field
			}
			set |= 1 << field
			if !decodeCoinField(w, field, raw) {
				return 0, false
			}
		}
		i = p.ws(end)
		if p.at(i, ',') {
			i = p.ws(i + 1)
			continue
		}
		if p.at(i, '}') {
			return i + 1, true
		}
		return 0, false
	}
}

// decodeCoinField decodes raw into field f of w (see coinFields).
func decodeCoinField(w *coinInfoWire, f int, raw []byte) bool {
	var err error
	switch f {
	case 0:
		w.Coin = new(wire.String)
		err = w.Coin.UnmarshalJSON(raw)
	case 1:
		err = w.Ticker.UnmarshalJSON(raw)
	case 2:
		w.MinimumTransaction = new(wire.Amount)
		err = w.MinimumTransaction.UnmarshalJSON(raw)
	case 3:
		w.MinimumTransactionCoin = new(wire.Amount)
		err = w.MinimumTransactionCoin.UnmarshalJSON(raw)
	case 4:
		err = w.MinimumFee.UnmarshalJSON(raw)
	case 5:
		err = w.MinimumFeeCoin.UnmarshalJSON(raw)
	case 6:
		err = w.FeePercent.UnmarshalJSON(raw)
	case 7:
		err = w.NetworkFeeEstimation.UnmarshalJSON(raw)
	case 8:
		err = w.Prices.UnmarshalJSON(raw)
	case 9:
		err = w.PricesUpdated.UnmarshalJSON(raw)
	case 10:
		err = w.Status.UnmarshalJSON(raw)
	case 11:
		err = w.Logo.UnmarshalJSON(raw)
	}
	return err == nil
}
