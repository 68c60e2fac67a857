package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

func estimateCmd() *command {
	return &command{
		name:     "estimate",
		synopsis: "-ticker TICKER [-addresses N] [-priority LEVEL] [flags]",
		summary:  "estimate the blockchain fee of forwarding a payment",
		help: `Estimates the blockchain fee of forwarding a payment of the coin to N
destination addresses. The estimate leaves out the service's own fee.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			n := fs.Int("addresses", 1, fmt.Sprintf("number of destination addresses, 1 to %d (as in create)", cryptapi.MaxOutputs))
			prio := fs.String("priority", "", "forwarding fee `level`, e.g. default or fast")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk); err != nil {
					return err
				}
				if *n < 1 || *n > cryptapi.MaxOutputs {
					return usagef("-addresses must be between 1 and %d", cryptapi.MaxOutputs)
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				e, err := c.Estimate(ctx, *tk, &cryptapi.EstimateOptions{Addresses: *n, Priority: strings.TrimSpace(*prio)})
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						EstimatedCost         decimal.Decimal            `json:"estimated_cost"`
						EstimatedCostCurrency map[string]decimal.Decimal `json:"estimated_cost_currency"`
					}{e.EstimatedCost, e.EstimatedCostCurrency})
				}
				t := newTable()
				t.kv("Estimated cost", e.EstimatedCost.String()+" "+*tk)
				for _, cur := range sortedKeys(e.EstimatedCostCurrency) {
					t.kv("Estimated cost "+cur, e.EstimatedCostCurrency[cur].String())
				}
				return t.flush(a.stdout)
			}
		},
	}
}
