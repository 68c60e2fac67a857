package main

import (
	"context"
	"flag"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/forwardpay/cryptapi-go/callback"
)

type reconciledJSON struct {
	UUID               string     `json:"uuid"`
	Pending            bool       `json:"pending"`
	AddressIn          string     `json:"address_in"`
	TxIDIn             string     `json:"txid_in"`
	TxIDOut            string     `json:"txid_out,omitempty"`
	ValueCoin          string     `json:"value_coin"`
	ValueForwardedCoin string     `json:"value_forwarded_coin,omitempty"`
	FeeCoin            string     `json:"fee_coin,omitempty"`
	Coin               string     `json:"coin"`
	Custom             url.Values `json:"custom,omitempty"`
}

type reconcileReportJSON struct {
	Seen         int      `json:"seen"`
	Processed    int      `json:"missed"`
	Acknowledged int      `json:"acknowledged"`
	NotReady     int      `json:"not_ready"`
	Failed       int      `json:"failed"`
	Errors       []string `json:"errors,omitempty"`
}

func reconcileCmd() *command {
	return &command{
		name:     "reconcile",
		synopsis: "-ticker TICKER -callback URL -address-in ADDRESS [flags]",
		summary:  "list the payments whose callbacks never reached the merchant",
		help: `Reads the logs of a callback URL and lists every payment the merchant
has not acknowledged with *ok* although it is confirmed (or pending, where
pending callbacks were asked for): the callbacks that were missed, as the
payment each callback would have carried, custom parameters included.

-address-in is the payment address your records hold for that callback
URL. Anyone can create an address with your callback URL that forwards
to them; the logs of such an address are refused, not listed as payments
to you.

This command only lists; it records nothing. To process missed payments
exactly once, call callback.Reconcile from the merchant's backend with the
same store as its callback handler.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			cb := fs.String("callback", "", "callback `URL`, exactly as created (required)")
			addressIn := fs.String("address-in", "", "the payment `address` created for that callback URL, as your records hold it (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk, "callback", *cb, "address-in", *addressIn); err != nil {
					return err
				}
				mine := strings.TrimSpace(*addressIn)
				known := func(_ context.Context, addressIn string) (bool, error) { return addressIn == mine, nil }
				c, err := co.client()
				if err != nil {
					return err
				}
				var mu sync.Mutex
				var missed []reconciledJSON
				collect := func(_ context.Context, p *callback.Payment) error {
					mu.Lock()
					defer mu.Unlock()
					missed = append(missed, reconciledJSON{
						UUID: p.UUID, Pending: p.Pending, AddressIn: p.AddressIn, TxIDIn: p.TxIDIn,
						TxIDOut: p.TxIDOut, ValueCoin: p.ValueCoin.String(), ValueForwardedCoin: decOpt(p.ValueForwardedCoin),
						FeeCoin: decOpt(p.FeeCoin), Coin: p.Coin, Custom: p.Custom,
					})
					return nil
				}
				rep, err := callback.Reconcile(ctx, c, *tk, strings.TrimSpace(*cb), collect,
					callback.WithStore(callback.NewMemoryStore()), callback.WithAddressCheck(known))
				if err != nil && rep.Seen == 0 {
					return err
				}
				out := reconcileReportJSON{Seen: rep.Seen, Processed: rep.Processed, Acknowledged: rep.Acknowledged, NotReady: rep.NotReady, Failed: rep.Failed}
				for _, e := range rep.Errors {
					out.Errors = append(out.Errors, e.Error())
				}
				if co.json {
					if missed == nil {
						missed = []reconciledJSON{}
					}
					if werr := writeJSON(a.stdout, map[string]any{"report": out, "missed": missed}); werr != nil {
						return werr
					}
					return err
				}
				t := newTable()
				t.row("UUID", "KIND", "VALUE_COIN", "TXID_IN", "CUSTOM")
				for _, m := range missed {
					kind := "confirmed"
					if m.Pending {
						kind = "pending"
					}
					t.row(m.UUID, kind, m.ValueCoin, m.TxIDIn, customText(m.Custom))
				}
				if len(missed) > 0 {
					if werr := t.flush(a.stdout); werr != nil {
						return werr
					}
				}
				s := newTable()
				s.kv("payments", strconv.Itoa(rep.Seen))
				s.kv("missed", strconv.Itoa(rep.Processed))
				s.kv("acknowledged", strconv.Itoa(rep.Acknowledged))
				s.kv("not ready", strconv.Itoa(rep.NotReady))
				s.kv("failed", strconv.Itoa(rep.Failed))
				if werr := s.flush(a.stdout); werr != nil {
					return werr
				}
				return err
			}
		},
	}
}

func customText(v url.Values) string {
	if len(v) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+strings.Join(v[k], ","))
	}
	return strings.Join(parts, " ")
}
