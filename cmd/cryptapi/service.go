package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/shopspring/decimal"
)

// ---- info ----

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

// ---- coins ----

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

// ---- create ----

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

// ---- logs ----

type logsJSON struct {
	AddressIn           string        `json:"address_in"`
	AddressOut          string        `json:"address_out"`
	Outputs             []outputJSON  `json:"outputs"`
	CallbackURL         string        `json:"callback_url"`
	NotifyPending       bool          `json:"notify_pending"`
	NotifyConfirmations int           `json:"notify_confirmations"`
	Priority            string        `json:"priority,omitempty"`
	Payments            []paymentJSON `json:"payments"`
}

type paymentJSON struct {
	UUID               string                     `json:"uuid,omitempty"`
	TxIDIn             string                     `json:"txid_in"`
	TxIDOut            string                     `json:"txid_out,omitempty"`
	ValueCoin          decimal.Decimal            `json:"value_coin"`
	ValueForwardedCoin decimal.Decimal            `json:"value_forwarded_coin"`
	FeeCoin            decimal.Decimal            `json:"fee_coin"`
	FeePercent         decimal.Decimal            `json:"fee_percent"`
	Confirmations      int                        `json:"confirmations"`
	Result             string                     `json:"result"`
	Confirmed          bool                       `json:"confirmed"`
	LastUpdate         string                     `json:"last_update,omitempty"`
	Price              *decimal.Decimal           `json:"price,omitempty"`
	Prices             map[string]decimal.Decimal `json:"prices,omitempty"`
	Deliveries         []deliveryJSON             `json:"deliveries"`
}

type deliveryJSON struct {
	RequestURL     string `json:"request_url,omitempty"`
	Response       string `json:"response"`
	ResponseStatus string `json:"response_status"`
	Pending        bool   `json:"pending"`
	Confirmed      bool   `json:"confirmed"`
	NextTry        string `json:"next_try,omitempty"`
}

func toLogsJSON(l *cryptapi.Logs) logsJSON {
	out := logsJSON{
		AddressIn: l.AddressIn, AddressOut: l.AddressOut, Outputs: toOutputs(l.Outputs),
		CallbackURL: l.CallbackURL, NotifyPending: l.NotifyPending,
		NotifyConfirmations: l.NotifyConfirmations, Priority: l.Priority,
		Payments: make([]paymentJSON, 0, len(l.Callbacks)),
	}
	for i := range l.Callbacks {
		p := &l.Callbacks[i]
		pj := paymentJSON{
			UUID: p.UUID, TxIDIn: p.TxIDIn, TxIDOut: p.TxIDOut,
			ValueCoin: p.ValueCoin, ValueForwardedCoin: p.ValueForwardedCoin,
			FeeCoin: p.FeeCoin, FeePercent: p.FeePercent, Confirmations: p.Confirmations,
			Result: string(p.Result), Confirmed: p.Confirmed(), LastUpdate: timeText(p.LastUpdate),
			Prices: p.Prices, Deliveries: make([]deliveryJSON, 0, len(p.Logs)),
		}
		if !p.Price.IsZero() {
			price := p.Price
			pj.Price = &price
		}
		for _, e := range p.Logs {
			pj.Deliveries = append(pj.Deliveries, deliveryJSON{
				RequestURL: e.RequestURL, Response: e.Responses, ResponseStatus: e.ResponseStatus,
				Pending: e.Pending, Confirmed: e.Confirmed, NextTry: timeText(e.NextTry),
			})
		}
		out.Payments = append(out.Payments, pj)
	}
	return out
}

func logsCmd() *command {
	return &command{
		name:     "logs",
		synopsis: "-ticker TICKER -callback URL [flags]",
		summary:  "list the payments and callback deliveries of a callback URL",
		help: `Lists the payments made to the address of a callback URL, and every
delivery of their callbacks. -callback must be exactly the URL the address
was created with, custom parameters included (create prints it).

A payment is confirmed when a confirmed callback was delivered; its
result alone (pending, sent, done) does not say so.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			cb := fs.String("callback", "", "callback `URL`, exactly as created (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk, "callback", *cb); err != nil {
					return err
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				l, err := c.Logs(ctx, *tk, strings.TrimSpace(*cb))
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, toLogsJSON(l))
				}
				return writeLogs(a, l)
			}
		},
	}
}

func writeLogs(a *app, l *cryptapi.Logs) error {
	t := newTable()
	t.kv("Address in", l.AddressIn)
	t.kv("Address out", l.AddressOut)
	t.kv("Callback URL", l.CallbackURL)
	t.kv("Pending callbacks", yesNo(l.NotifyPending))
	t.kv("Confirmations", fmt.Sprint(l.NotifyConfirmations))
	t.kv("Priority", l.Priority)
	t.kv("Payments", fmt.Sprint(len(l.Callbacks)))
	if err := t.flush(a.stdout); err != nil {
		return err
	}
	if len(l.Callbacks) == 0 {
		return nil
	}
	t = newTable()
	t.row("UUID", "TXID IN", "VALUE", "FORWARDED", "CONF", "RESULT", "CONFIRMED", "LAST UPDATE")
	for i := range l.Callbacks {
		p := &l.Callbacks[i]
		t.row(p.UUID, p.TxIDIn, p.ValueCoin.String(), p.ValueForwardedCoin.String(),
			fmt.Sprint(p.Confirmations), string(p.Result), yesNo(p.Confirmed()), timeText(p.LastUpdate))
	}
	fmt.Fprintln(a.stdout)
	if err := t.flush(a.stdout); err != nil {
		return err
	}
	t = newTable()
	t.row("PAYMENT", "CALLBACK", "STATUS", "RESPONSE", "NEXT TRY")
	n := 0
	for i := range l.Callbacks {
		p := &l.Callbacks[i]
		id := p.UUID
		if id == "" {
			id = p.TxIDIn
		}
		for _, e := range p.Logs {
			kind := "confirmed"
			if e.Pending {
				kind = "pending"
			}
			t.row(id, kind, e.ResponseStatus, truncate(e.Responses, 40), timeText(e.NextTry))
			n++
		}
	}
	if n == 0 {
		return nil
	}
	fmt.Fprintln(a.stdout)
	return t.flush(a.stdout)
}

// ---- qrcode ----

func qrcodeCmd() *command {
	return &command{
		name:     "qrcode",
		synopsis: "-ticker TICKER -address ADDRESS [-value AMOUNT] [-out FILE] [flags]",
		summary:  "write a payment QR code as a PNG file",
		help: `Asks the service for a QR code of the payment address (and amount),
writes it as a PNG file and prints the file's path and the payment URI
the code holds.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			addr := fs.String("address", "", "payment `address` (address_in) (required)")
			var value decimalFlag
			fs.Var(&value, "value", "`amount` in the coin to put in the payment URI")
			size := fs.Int("size", cryptapi.DefaultQRSize, fmt.Sprintf("image size in `pixels`, %d to %d", cryptapi.MinQRSize, cryptapi.MaxQRSize))
			out := fs.String("out", "qrcode.png", "PNG `file` to write (replaced if it exists)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk, "address", *addr, "out", *out); err != nil {
					return err
				}
				if value.set && !value.d.IsPositive() {
					return usagef("-value must be a positive amount")
				}
				if *size < cryptapi.MinQRSize || *size > cryptapi.MaxQRSize {
					return usagef("-size must be between %d and %d", cryptapi.MinQRSize, cryptapi.MaxQRSize)
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				qr, err := c.QRCode(ctx, *tk, &cryptapi.QRCodeOptions{Address: strings.TrimSpace(*addr), Value: value.d, Size: *size})
				if err != nil {
					return err
				}
				path, n, err := writePNG(*out, qr)
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						File       string `json:"file"`
						Bytes      int    `json:"bytes"`
						PaymentURI string `json:"payment_uri"`
					}{path, n, qr.PaymentURI})
				}
				t := newTable()
				t.kv("File", path)
				t.kv("Payment URI", qr.PaymentURI)
				return t.flush(a.stdout)
			}
		},
	}
}

// writePNG writes the QR code image to name and returns its absolute path
// and size.
func writePNG(name string, qr *cryptapi.QRCode) (string, int, error) {
	img, err := qr.PNG()
	if err != nil {
		return "", 0, err
	}
	path, err := filepath.Abs(name)
	if err != nil {
		return "", 0, err
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		return "", 0, fmt.Errorf("writing the image: %w", err)
	}
	return path, len(img), nil
}

// ---- convert ----

func convertCmd() *command {
	return &command{
		name:     "convert",
		synopsis: "-ticker TICKER -value AMOUNT -from CODE [flags]",
		summary:  "convert an amount from a currency or coin into a coin",
		help: `Converts an amount in a fiat currency (USD, EUR, ...) or in another coin
into the coin of -ticker, at the service's current rate.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin to convert into, e.g. btc (required)")
			var value decimalFlag
			fs.Var(&value, "value", "`amount` to convert (required)")
			from := fs.String("from", "", "currency `code` or ticker of -value, e.g. USD (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk); err != nil {
					return err
				}
				v, err := value.positive("value")
				if err != nil {
					return err
				}
				if err := required("from", *from); err != nil {
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

// ---- estimate ----

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

// ---- pubkey ----

func pubkeyCmd() *command {
	return &command{
		name:     "pubkey",
		synopsis: "[flags]",
		summary:  "fetch the public key that verifies callback signatures",
		help: `Fetches the RSA public key the service signs callbacks with and prints
it as PEM, followed by its SHA-256 fingerprint and whether it is the key
published by the keyless deployment (the one verify uses by default).
The output can be saved and given to verify -pubkey-file.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			return func(ctx context.Context, a *app) error {
				c, err := co.client()
				if err != nil {
					return err
				}
				pub, err := c.PublicKey(ctx)
				if err != nil {
					return err
				}
				der, err := x509.MarshalPKIXPublicKey(pub)
				if err != nil {
					return fmt.Errorf("encoding the key: %w", err)
				}
				pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
				fp := callback.Fingerprint(pub)
				published := fp == callback.PublishedKeyFingerprint
				if co.json {
					return writeJSON(a.stdout, struct {
						PEM         string `json:"pem"`
						Fingerprint string `json:"fingerprint"`
						Bits        int    `json:"bits"`
						Published   bool   `json:"published"`
					}{pemText, fp, pub.N.BitLen(), published})
				}
				t := newTable()
				t.kv("Fingerprint (SHA-256)", fp)
				t.kv("Bits", fmt.Sprint(pub.N.BitLen()))
				t.kv("Published key", yesNo(published))
				if _, err := fmt.Fprint(a.stdout, pemText); err != nil {
					return err
				}
				return t.flush(a.stdout)
			}
		},
	}
}
