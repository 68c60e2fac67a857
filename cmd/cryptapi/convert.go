package main

import (
	"context"
	"flag"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

func convertCmd() *command {
	return &command{
		name:     "convert",
		synopsis: "-ticker TICKER -amount AMOUNT -currency CODE [flags]",
		summary:  "convert an amount from a currency or coin into a coin",
		help: `Converts an amount in a fiat currency (USD, EUR, ...) or in another coin
into the coin of -ticker, at the service's current rate.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin to convert into, e.g. btc (required)")
			var value decimalFlag
			fs.Var(&value, "amount", "`amount` to convert (required)")
			alias(fs, "value", "amount")
			from := fs.String("currency", "", "fiat currency `code` or ticker of -amount, e.g. USD (required)")
			alias(fs, "from", "currency")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk); err != nil {
					return err
				}
				v, err := value.positive("amount")
				if err != nil {
					return err
				}
				if err := required("currency", *from); err != nil {
					return err
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				cv, err := c.Convert(ctx, *tk, &cryptapi.ConvertOptions{Value: v, From: strings.TrimSpace(*from)})
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						Value        decimal.Decimal `json:"value"`
						From         string          `json:"from"`
						Ticker       string          `json:"ticker"`
						ValueCoin    decimal.Decimal `json:"value_coin"`
						ExchangeRate decimal.Decimal `json:"exchange_rate"`
					}{v, *from, *tk, cv.ValueCoin, cv.ExchangeRate})
				}
				t := newTable()
				t.kv("Amount", v.String()+" "+*from)
				t.kv("In coin", cv.ValueCoin.String()+" "+*tk)
				t.kv("Exchange rate", cv.ExchangeRate.String())
				return t.flush(a.stdout)
			}
		},
	}
}
