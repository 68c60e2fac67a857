package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/forwardpay/cryptapi-go/internal/wire"
)

// errStatusError is returned by Coins.UnmarshalJSON for an answer that is
// {"status":"error"}; do turns it into the *APIError the body describes.
var errStatusError = errors.New(`the answer says "status": "error"`)

// Coins is the all-coins answer keyed by ticker in "trc20_usdt" form.
type Coins map[string]*CoinInfo

// UnmarshalJSON decodes the all-coins object. Native coins map straight to
// a record; token networks map to an object of tokens. Keys that are not
// tickers, and values that are not coin records, are skipped.
func (cs *Coins) UnmarshalJSON(b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return err
	}
	out := make(Coins, len(top))
	if st, ok := top["status"]; ok {
		if s, _ := wire.DecodeString(st); strings.EqualFold(s, "error") {
			return errStatusError
		}
	}
	for key, raw := range top {
		if !isObject(raw) {
			continue
		}
		tk, err := ticker.Parse(key)
		if err != nil {
			continue
		}
		// A network's first value is a token record; a record's first
		// value is (nearly always) a scalar. Peeking saves decoding every
		// network as a record first.
		network := firstValueIsObject(raw)
		if !network {
			if ok, err := decodeRecord(out, tk.Key(), raw); err != nil || ok {
				if err != nil {
					return err
				}
				continue
			}
		}
		// A network whose values are token records.
		var tokens map[string]json.RawMessage
		if err := json.Unmarshal(raw, &tokens); err != nil {
			continue
		}
		found := false
		for tok, traw := range tokens {
			t, err := ticker.Parse(key + "_" + tok)
			if err != nil || !isObject(traw) {
				continue
			}
			ok, err := decodeRecord(out, t.Key(), traw)
			if err != nil {
				return err
			}
			found = found || ok
		}
		if network && !found {
			// A record that happens to start with an object field.
			if _, err := decodeRecord(out, tk.Key(), raw); err != nil {
				return err
			}
		}
	}
	*cs = out
	return nil
}

// decodeRecord adds raw to out as the record of key if it is one.
func decodeRecord(out Coins, key string, raw json.RawMessage) (bool, error) {
	var w coinInfoWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return false, fmt.Errorf("coin %q: %w", truncate(key, 40), err)
	}
	if !w.isRecord() {
		return false, nil
	}
	addCoin(out, key, &w)
	return true, nil
}

// firstValueIsObject reports whether the first member of the JSON object
// raw has an object value. It reads no further than that value's first
// byte; raw has been validated by the decoder.
func firstValueIsObject(raw json.RawMessage) bool {
	i := skipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipJSONSpace(raw, i+1)
	if i >= len(raw) || raw[i] != '"' {
		return false
	}
	for i++; i < len(raw) && raw[i] != '"'; i++ {
		if raw[i] == '\\' {
			i++
		}
	}
	i = skipJSONSpace(raw, i+1)
	if i >= len(raw) || raw[i] != ':' {
		return false
	}
	i = skipJSONSpace(raw, i+1)
	return i < len(raw) && raw[i] == '{'
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func addCoin(out Coins, key string, w *coinInfoWire) {
	ci := w.info()
	ci.Ticker = key // the record may name a token without its network
	out[key] = &ci
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// Coins returns every coin and token the service supports, keyed by
// ticker in "trc20_usdt" form. The list changes rarely: the client keeps
// it for the info cache TTL (DefaultInfoCacheTTL; see WithInfoCacheTTL),
// so the prices it holds may be that old (Info reads them fresh), and
// callers at the same time share one request. The map and records
// returned are the caller's own.
func (c *Client) Coins(ctx context.Context, o *InfoOptions) (Coins, error) {
	key := "coins"
	if o != nil && o.NoPrices {
		key = "coins without prices"
	}
	cs, err := cachedRead(ctx, c, "coins", key, func(ctx context.Context) (Coins, error) {
		var out Coins
		err := c.do(ctx, &request{
			op:    "coins",
			path:  "info/",
			query: o.query(),
			retry: true,
		}, &out)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	if c.infoTTL > 0 {
		cs = cs.clone() // the list kept stays the client's
	}
	return cs, nil
}

// clone returns a copy of cs whose records and price maps are the
// copy's own, so that a caller may change what Coins returned without
// changing the list the client keeps.
func (cs Coins) clone() Coins {
	out := make(Coins, len(cs))
	for k, ci := range cs {
		cp := *ci
		cp.Prices = maps.Clone(ci.Prices)
		out[k] = &cp
	}
	return out
}
