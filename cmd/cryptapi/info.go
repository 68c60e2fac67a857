package main

import (
	"context"
	"flag"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

type coinJSON struct {
	Ticker                 string                     `json:"ticker"`
	Coin                   string                     `json:"coin"`
	MinimumTransaction     decimal.Decimal            `json:"minimum_transaction"`
	MinimumTransactionCoin decimal.Decimal            `json:"minimum_transaction_coin"`
	MinimumFee             decimal.Decimal            `json:"minimum_fee"`
	MinimumFeeCoin         decimal.Decimal            `json:"minimum_fee_coin"`
	FeePercent             decimal.Decimal            `json:"fee_percent"`
	NetworkFeeEstimation   decimal.Decimal            `json:"network_fee_estimation"`
	Prices                 map[string]decimal.Decimal `json:"prices,omitempty"`
	PricesUpdated          string                     `json:"prices_updated,omitempty"`
}

func toCoinJSON(ci *cryptapi.CoinInfo) coinJSON {
	return coinJSON{
		Ticker:                 ci.Ticker,
		Coin:                   ci.Coin,
		MinimumTransaction:     ci.MinimumTransaction,
		MinimumTransactionCoin: ci.MinimumTransactionCoin,
		MinimumFee:             ci.MinimumFee,
		MinimumFeeCoin:         ci.MinimumFeeCoin,
		FeePercent:             ci.FeePercent,
		NetworkFeeEstimation:   ci.NetworkFeeEstimation,
		Prices:                 ci.Prices,
		PricesUpdated:          timeText(ci.PricesUpdated),
	}
}

func infoCmd() *command {
	return &command{
		name:     "info",
		synopsis: "-ticker TICKER [-no-prices] [flags]",
		summary:  "show a coin's minimum payment, fees and prices",
		help: `Shows what the service says about one coin or token: the minimum
transaction (payments below it are ignored by the service and the funds
are lost), the fees and the prices. Tickers are written "btc",
"trc20_usdt" or "trc20/usdt".`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			noPrices := fs.Bool("no-prices", false, "leave prices out of the answer")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk); err != nil {
					return err
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				ci, err := c.Info(ctx, *tk, &cryptapi.InfoOptions{NoPrices: *noPrices})
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, toCoinJSON(ci))
				}
				t := newTable()
				t.kv("Ticker", ci.Ticker)
				t.kv("Coin", ci.Coin)
				t.kv("Minimum transaction", ci.MinimumTransactionCoin.String())
				t.kv("Minimum fee", decOpt(ci.MinimumFeeCoin))
				t.kv("Fee percent", ci.FeePercent.String())
				t.kv("Network fee estimate", decOpt(ci.NetworkFeeEstimation))
				for _, cur := range sortedKeys(ci.Prices) {
					t.kv("Price "+cur, ci.Prices[cur].String())
				}
				t.kv("Prices updated", timeText(ci.PricesUpdated))
				return t.flush(a.stdout)
			}
		},
	}
}

func coinsCmd() *command {
	return &command{
		name:     "coins",
		synopsis: "[-currency CODE] [-no-prices] [flags]",
		summary:  "list every supported coin and token",
		help: `Lists every coin and token the service supports, with its minimum
transaction, fee percentage and price in one currency.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			cur := fs.String("currency", "USD", "currency of the price column")
			noPrices := fs.Bool("no-prices", false, "leave prices out of the answer")
			return func(ctx context.Context, a *app) error {
				c, err := co.client()
				if err != nil {
					return err
				}
				coins, err := c.Coins(ctx, &cryptapi.InfoOptions{NoPrices: *noPrices})
				if err != nil {
					return err
				}
				keys := sortedKeys(coins)
				if co.json {
					out := make([]coinJSON, 0, len(keys))
					for _, k := range keys {
						out = append(out, toCoinJSON(coins[k]))
					}
					return writeJSON(a.stdout, out)
				}
				code := strings.ToUpper(strings.TrimSpace(*cur))
				t := newTable()
				head := []string{"TICKER", "COIN", "MINIMUM", "FEE %"}
				if !*noPrices {
					head = append(head, "PRICE "+code)
				}
				t.row(head...)
				for _, k := range keys {
					ci := coins[k]
					r := []string{k, ci.Coin, ci.MinimumTransactionCoin.String(), ci.FeePercent.String()}
					if !*noPrices {
						p, ok := priceIn(ci.Prices, code)
						if !ok {
							p = "-"
						}
						r = append(r, p)
					}
					t.row(r...)
				}
				return t.flush(a.stdout)
			}
		},
	}
}

// priceIn finds a price by currency code in any case.
func priceIn(prices map[string]decimal.Decimal, code string) (string, bool) {
	for k, v := range prices {
		if strings.EqualFold(k, code) {
			return v.String(), true
		}
	}
	return "", false
}
