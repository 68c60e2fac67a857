package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
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
	// Ticker is the ticker in "trc20_usdt" form. Info and Coins fill it in
	// when the service leaves it out.
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
}

// UnmarshalJSON decodes a coin record.
func (ci *CoinInfo) UnmarshalJSON(b []byte) error {
	var w struct {
		Coin                   wire.String    `json:"coin"`
		Ticker                 wire.String    `json:"ticker"`
		MinimumTransaction     wire.Amount    `json:"minimum_transaction"`
		MinimumTransactionCoin wire.Amount    `json:"minimum_transaction_coin"`
		MinimumFee             wire.Amount    `json:"minimum_fee"`
		MinimumFeeCoin         wire.Amount    `json:"minimum_fee_coin"`
		FeePercent             wire.Amount    `json:"fee_percent"`
		NetworkFeeEstimation   wire.Amount    `json:"network_fee_estimation"`
		Prices                 wire.AmountMap `json:"prices"`
		PricesUpdated          wire.Time      `json:"prices_updated"`
		Status                 wire.String    `json:"status"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*ci = CoinInfo{
		Coin:                   string(w.Coin),
		Ticker:                 string(w.Ticker),
		MinimumTransaction:     w.MinimumTransaction.D(),
		MinimumTransactionCoin: w.MinimumTransactionCoin.D(),
		MinimumFee:             w.MinimumFee.D(),
		MinimumFeeCoin:         w.MinimumFeeCoin.D(),
		FeePercent:             w.FeePercent.D(),
		NetworkFeeEstimation:   w.NetworkFeeEstimation.D(),
		Prices:                 w.Prices,
		PricesUpdated:          w.PricesUpdated.T(),
		Status:                 string(w.Status),
	}
	if ci.Prices == nil {
		ci.Prices = map[string]decimal.Decimal{}
	}
	return nil
}

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
	if out.Ticker == "" {
		out.Ticker = t.Key()
	}
	return &out, nil
}

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
	for key, raw := range top {
		if !isObject(raw) {
			continue
		}
		if _, err := ticker.Parse(key); err != nil {
			continue
		}
		if isCoinRecord(raw) {
			var ci CoinInfo
			if err := json.Unmarshal(raw, &ci); err != nil {
				return err
			}
			if ci.Ticker == "" {
				ci.Ticker = key
			}
			out[key] = &ci
			continue
		}
		var tokens map[string]json.RawMessage
		if err := json.Unmarshal(raw, &tokens); err != nil {
			continue
		}
		for tok, traw := range tokens {
			t, err := ticker.Parse(key + "_" + tok)
			if err != nil || !isObject(traw) || !isCoinRecord(traw) {
				continue
			}
			var ci CoinInfo
			if err := json.Unmarshal(traw, &ci); err != nil {
				return err
			}
			if ci.Ticker == "" {
				ci.Ticker = t.Key()
			}
			out[t.Key()] = &ci
		}
	}
	*cs = out
	return nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// isCoinRecord tells a coin record from a network of tokens by the fields
// every record has.
func isCoinRecord(raw json.RawMessage) bool {
	var probe struct {
		Coin                   json.RawMessage `json:"coin"`
		MinimumTransaction     json.RawMessage `json:"minimum_transaction"`
		MinimumTransactionCoin json.RawMessage `json:"minimum_transaction_coin"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	return probe.Coin != nil || probe.MinimumTransaction != nil || probe.MinimumTransactionCoin != nil
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
