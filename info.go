package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// InfoOptions are the parameters of Info and Coins.
type InfoOptions struct {
	// NoPrices leaves prices out of the answer (prices=0), which is smaller
	// and faster.
	NoPrices bool `url:"-"`
}

func (o *InfoOptions) query() url.Values {
	if o != nil && o.NoPrices {
		return url.Values{"prices": {"0"}}
	}
	return nil
}

// CoinInfo is what the service says about one coin or token.
type CoinInfo struct {
	// Coin is the display name.
	Coin string
	// Ticker is the ticker in "trc20_usdt" form. Info and Coins set it from
	// the ticker asked for or the answer's keys, also when the service
	// names a token without its network.
	Ticker string
	// MinimumTransaction is the minimum transaction in the smallest unit.
	MinimumTransaction decimal.Decimal
	// MinimumTransactionCoin is the minimum transaction in coin units.
	// Payments below it are ignored by the service and their funds lost.
	MinimumTransactionCoin decimal.Decimal
	// MinimumFee is the minimum fee in the smallest unit.
	MinimumFee decimal.Decimal
	// MinimumFeeCoin is the minimum fee in coin units.
	MinimumFeeCoin decimal.Decimal
	// FeePercent is the service fee percentage.
	FeePercent decimal.Decimal
	// NetworkFeeEstimation is the estimated network fee.
	NetworkFeeEstimation decimal.Decimal
	// Prices maps fiat codes to the coin's price; empty with NoPrices.
	Prices map[string]decimal.Decimal
	// PricesUpdated is when prices were last updated (zero if unknown).
	PricesUpdated time.Time
	// Status is "success" on the single-coin answer.
	Status string
	// Logo is the URL of the coin's logo, where the service sends one.
	Logo string
}

// coinInfoWire is a coin record as sent. The pointer fields tell a record
// from a network of tokens in the all-coins answer without a second pass.
type coinInfoWire struct {
	Coin                   *wire.String   `json:"coin"`
	Ticker                 wire.String    `json:"ticker"`
	MinimumTransaction     *wire.Amount   `json:"minimum_transaction"`
	MinimumTransactionCoin *wire.Amount   `json:"minimum_transaction_coin"`
	MinimumFee             wire.Amount    `json:"minimum_fee"`
	MinimumFeeCoin         wire.Amount    `json:"minimum_fee_coin"`
	FeePercent             wire.Amount    `json:"fee_percent"`
	NetworkFeeEstimation   wire.Amount    `json:"network_fee_estimation"`
	Prices                 wire.AmountMap `json:"prices"`
	PricesUpdated          wire.Time      `json:"prices_updated"`
	Status                 wire.String    `json:"status"`
	Logo                   wire.String    `json:"logo"`
}

// isRecord reports whether the object had the fields every record has.
func (w *coinInfoWire) isRecord() bool {
	return w.Coin != nil || w.MinimumTransaction != nil || w.MinimumTransactionCoin != nil
}

func (w *coinInfoWire) info() CoinInfo {
	ci := CoinInfo{
		Ticker:               string(w.Ticker),
		MinimumFee:           w.MinimumFee.D(),
		MinimumFeeCoin:       w.MinimumFeeCoin.D(),
		FeePercent:           w.FeePercent.D(),
		NetworkFeeEstimation: w.NetworkFeeEstimation.D(),
		Prices:               w.Prices,
		PricesUpdated:        w.PricesUpdated.T(),
		Status:               string(w.Status),
		Logo:                 string(w.Logo),
	}
	if w.Coin != nil {
		ci.Coin = string(*w.Coin)
	}
	if w.MinimumTransaction != nil {
		ci.MinimumTransaction = w.MinimumTransaction.D()
	}
	if w.MinimumTransactionCoin != nil {
		ci.MinimumTransactionCoin = w.MinimumTransactionCoin.D()
	}
	if ci.Prices == nil {
		ci.Prices = map[string]decimal.Decimal{}
	}
	return ci
}

// UnmarshalJSON decodes a coin record.
func (ci *CoinInfo) UnmarshalJSON(b []byte) error {
	var w coinInfoWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*ci = w.info()
	return nil
}

func (ci *CoinInfo) apiStatus() string { return ci.Status }

// Info returns the minimums, fees and prices of one coin. Read the minimum
// before showing a payment request: payments below it are lost.
func (c *Client) Info(ctx context.Context, ticker string, o *InfoOptions) (*CoinInfo, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	var out CoinInfo
	err = c.do(ctx, &request{
		op:    "info",
		path:  t.Path() + "/info/",
		query: o.query(),
		retry: true,
	}, &out)
	if err != nil {
		return nil, err
	}
	// The service may name a token without its network ("usdt"); the
	// ticker asked for is the canonical one.
	out.Ticker = t.Key()
	return &out, nil
}

// errStatusError is returned by Coins.UnmarshalJSON for an answer that is
// {"status":"error"}; do turns it into the *APIError the body describes.
var errStatusError = errors.New(`the answer says "status": "error"`)

// Coins is the all-coins answer keyed by ticker in "trc20_usdt" form.
type Coins map[string]*CoinInfo

// UnmarshalJSON decodes the all-coins object. Native coins map straight to
// a record; token networks map to an object of tokens. Keys that are not
// tickers, and values that are not coin records, are skipped.
func (cs *Coins) UnmarshalJSON(b []byte) error {
	out, err := plainCoins(b)
	if err != nil {
		return err
	}
	*cs = out
	return nil
}

// plainCoins decodes the all-coins object with encoding/json.
func plainCoins(b []byte) (Coins, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	out := make(Coins, len(top))
	if st, ok := top["status"]; ok {
		if s, _ := wire.DecodeString(st); strings.EqualFold(s, "error") {
			return nil, errStatusError
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
					return nil, err
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
			var tw coinInfoWire
			if err := json.Unmarshal(traw, &tw); err != nil {
				return nil, err
			}
			if tw.isRecord() {
				addCoin(out, t.Key(), &tw)
				found = true
			}
		}
		if network && !found {
			// A record that happens to start with an object field.
			if _, err := decodeRecord(out, tk.Key(), raw); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
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
// ticker in "trc20_usdt" form.
func (c *Client) Coins(ctx context.Context, o *InfoOptions) (Coins, error) {
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
}
