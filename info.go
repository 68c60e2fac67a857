package cryptapi

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

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
	out, err := call[CoinInfo](ctx, c, &request{
		op:    "info",
		path:  t.Path() + "/info/",
		query: o.query(),
		retry: true,
	})
	if err != nil {
		return nil, err
	}
	// The service may name a token without its network ("usdt"); the
	// ticker asked for is the canonical one.
	out.Ticker = t.Key()
	return out, nil
}
