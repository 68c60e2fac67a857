package main

import (
	"context"
	"flag"
	"strings"
)

func simFundCmd() *command {
	return &command{
		name:     "fund",
		synopsis: "-ticker TICKER -amount AMOUNT [-base-url URL] [flags]",
		summary:  "add funds to the simulator's payout wallet of a coin",
		help: `Adds -amount of the coin to the payout wallet of the simulator (served
with -api-key: payout wallets belong to API-key accounts), and prints the
wallet's address and new balance. Payouts are paid from it; one whose
total with fee exceeds the balance ends in "Error". Paying the wallet's
address with "cryptapi sim pay" funds it too.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			sf := addSimFlags(fs)
			tk := fs.String("ticker", "", "coin or token, e.g. btc (required)")
			var amount decimalFlag
			fs.Var(&amount, "amount", "`amount` to add, in the coin (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk); err != nil {
					return err
				}
				amt, err := amount.positive("amount")
				if err != nil {
					return err
				}
				out, err := sf.call(ctx, a, "fund", map[string]string{"ticker": strings.TrimSpace(*tk), "amount": amt.String()})
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						Address string `json:"address"`
						Balance string `json:"balance"`
					}{out["address"], out["balance"]})
				}
				t := newTable()
				t.kv("Payout wallet", out["address"])
				t.kv("Balance", out["balance"])
				return t.flush(a.stdout)
			}
		},
	}
}
