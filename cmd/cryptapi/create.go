package main

import (
	"context"
	"flag"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

// createFlags are the address-creation flags shared by create and request.
type createFlags struct {
	ticker, callback, address, email, priority string
	params                                     listFlag
	pending, post, jsonBody, multiToken, conv  bool
	confirmations                              int
}

func addCreateFlags(fs *flag.FlagSet) *createFlags {
	f := &createFlags{}
	fs.StringVar(&f.ticker, "ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
	fs.StringVar(&f.callback, "callback", "", "`URL` that receives the callbacks; it identifies the address for good (required)")
	fs.Var(&f.params, "param", "custom `name=value` added to the callback URL, e.g. order=1234 (repeatable)")
	fs.StringVar(&f.address, "address", "", "destination `address`, or shares as 0.7@ADDR1|0.3@ADDR2 (required without an API key)")
	fs.BoolVar(&f.pending, "pending", false, "also send a callback when the payment is seen, unconfirmed")
	fs.IntVar(&f.confirmations, "confirmations", 0, "confirmations before the confirmed callback (0: the service default, 1)")
	fs.StringVar(&f.email, "email", "", "`address` that receives payment notifications (keyless form only)")
	fs.BoolVar(&f.post, "post", false, "send callbacks as POST instead of GET")
	fs.BoolVar(&f.jsonBody, "json-body", false, "with -post, send callbacks with a JSON body instead of a form")
	fs.StringVar(&f.priority, "priority", "", "forwarding fee `level`, e.g. default or fast (allowed values differ per coin)")
	fs.BoolVar(&f.multiToken, "multi-token", false, "accept a payment in any supported token to the address")
	fs.BoolVar(&f.conv, "convert", false, "make callbacks carry the value converted to fiat currencies")
	return f
}

// options checks the flags and builds the SDK's create options.
func (f *createFlags) options() (*cryptapi.CreateOptions, error) {
	if err := required("ticker", f.ticker, "callback", f.callback); err != nil {
		return nil, err
	}
	if f.confirmations < 0 {
		return nil, usagef("-confirmations must be 0 or more")
	}
	o := &cryptapi.CreateOptions{
		Callback:      strings.TrimSpace(f.callback),
		Pending:       f.pending,
		Confirmations: f.confirmations,
		Email:         strings.TrimSpace(f.email),
		Post:          f.post,
		JSON:          f.jsonBody,
		Priority:      strings.TrimSpace(f.priority),
		MultiToken:    f.multiToken,
		Convert:       f.conv,
	}
	if len(f.params) > 0 {
		o.Params = url.Values{}
		for _, p := range f.params {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("-param must be name=value")
			}
			o.Params.Add(k, v)
		}
	}
	addr := strings.TrimSpace(f.address)
	if strings.ContainsAny(addr, "@{") {
		outs, err := cryptapi.ParseAddressOut(addr)
		if err != nil {
			return nil, usagef("-address: shares must be written 0.7@ADDR1|0.3@ADDR2")
		}
		o.Outputs = outs
	} else {
		o.Address = addr
	}
	return o, nil
}

type outputJSON struct {
	Address string          `json:"address"`
	Share   decimal.Decimal `json:"share"`
}

func toOutputs(outs []cryptapi.Output) []outputJSON {
	res := make([]outputJSON, 0, len(outs))
	for _, o := range outs {
		res = append(res, outputJSON{Address: o.Address, Share: o.Share})
	}
	return res
}

type addressJSON struct {
	AddressIn              string          `json:"address_in"`
	AddressOut             string          `json:"address_out"`
	Outputs                []outputJSON    `json:"outputs"`
	CallbackURL            string          `json:"callback_url"`
	Priority               string          `json:"priority,omitempty"`
	MinimumTransactionCoin decimal.Decimal `json:"minimum_transaction_coin"`
}

func createCmd() *command {
	return &command{
		name:     "create",
		synopsis: "-ticker TICKER -callback URL [-address ADDRESS] [flags]",
		summary:  "create a payment address",
		help: `Creates a payment address (address_in) for the ticker. What the customer
pays to it is forwarded, minus the fee, to -address, and the callback URL
is called. The callback URL identifies the address for good: creating
again with the same URL returns the same address, even with another
destination. Custom data (an order id, a nonce) rides in the callback URL
through -param and comes back on every callback.

Check the minimum first (cryptapi info, or use cryptapi request): payments
below it are ignored by the service and the funds are lost.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			cf := addCreateFlags(fs)
			return func(ctx context.Context, a *app) error {
				o, err := cf.options()
				if err != nil {
					return err
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				addr, err := c.CreateAddress(ctx, cf.ticker, o)
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, addressJSON{
						AddressIn: addr.AddressIn, AddressOut: addr.AddressOut, Outputs: toOutputs(addr.Outputs),
						CallbackURL: addr.CallbackURL, Priority: addr.Priority, MinimumTransactionCoin: addr.MinimumTransactionCoin,
					})
				}
				t := newTable()
				t.kv("Address in", addr.AddressIn)
				t.kv("Address out", addr.AddressOut)
				t.kv("Callback URL", addr.CallbackURL)
				t.kv("Priority", addr.Priority)
				t.kv("Minimum transaction", decOpt(addr.MinimumTransactionCoin))
				return t.flush(a.stdout)
			}
		},
	}
}
