package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

// ---- request ----

func requestCmd() *command {
	return &command{
		name:     "request",
		synopsis: "-ticker TICKER -amount AMOUNT [-currency CODE] -callback URL [-address ADDRESS] [flags]",
		summary:  "prepare a payment request: convert, check the minimum, create the address",
		help: `Prepares what to show a customer, without risking the customer's money:
converts -amount from -currency into the coin (no -currency: the amount is
in the coin), reads the coin's minimum transaction and refuses an amount
below it (the service would ignore such a payment and the funds would be
lost), then creates the address and asks for the payment URI. With
-qr-out the QR code is written as a PNG file too.

It takes every flag of create.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			cf := addCreateFlags(fs)
			var amount decimalFlag
			fs.Var(&amount, "amount", "`amount` the customer pays, in -currency (required)")
			cur := fs.String("currency", "", "fiat `code` of -amount, e.g. USD (default: the amount is in the coin)")
			qrOut := fs.String("qr-out", "", "also write the payment QR code to this PNG `file`")
			qrSize := fs.Int("qr-size", cryptapi.DefaultQRSize, fmt.Sprintf("QR code size in `pixels`, %d to %d", cryptapi.MinQRSize, cryptapi.MaxQRSize))
			return func(ctx context.Context, a *app) error {
				o, err := cf.options()
				if err != nil {
					return err
				}
				amt, err := amount.positive("amount")
				if err != nil {
					return err
				}
				if *qrSize < cryptapi.MinQRSize || *qrSize > cryptapi.MaxQRSize {
					return usagef("-qr-size must be between %d and %d", cryptapi.MinQRSize, cryptapi.MaxQRSize)
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				pr, err := c.RequestPayment(ctx, cf.ticker, &cryptapi.PaymentRequestOptions{
					CreateOptions: *o,
					Amount:        amt,
					Currency:      strings.TrimSpace(*cur),
					QRCode:        *qrOut != "",
					QRSize:        *qrSize,
				})
				if err != nil {
					var bm *cryptapi.BelowMinimumError
					if errors.As(err, &bm) {
						return fmt.Errorf("%s %s is below the minimum transaction of %s %s; the service would ignore the payment and the funds would be lost. No address was created",
							bm.Amount, bm.Ticker, bm.Minimum, bm.Ticker)
					}
					return err
				}
				qrPath := ""
				if pr.QRCode != nil {
					if qrPath, _, err = writePNG(*qrOut, pr.QRCode); err != nil {
						return err
					}
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						Ticker       string          `json:"ticker"`
						AddressIn    string          `json:"address_in"`
						AmountCoin   decimal.Decimal `json:"amount_coin"`
						Amount       decimal.Decimal `json:"amount"`
						Currency     string          `json:"currency,omitempty"`
						ExchangeRate decimal.Decimal `json:"exchange_rate"`
						Minimum      decimal.Decimal `json:"minimum"`
						PaymentURI   string          `json:"payment_uri"`
						CallbackURL  string          `json:"callback_url"`
						QRFile       string          `json:"qr_file,omitempty"`
					}{pr.Ticker, pr.Address.AddressIn, pr.AmountCoin, pr.Amount, pr.Currency,
						pr.ExchangeRate, pr.Minimum, pr.PaymentURI, pr.Address.CallbackURL, qrPath})
				}
				t := newTable()
				t.kv("Pay to", pr.Address.AddressIn)
				t.kv("Amount", pr.AmountCoin.String()+" "+pr.Ticker)
				if pr.Currency != "" {
					t.kv("Asked", pr.Amount.String()+" "+pr.Currency)
					t.kv("Exchange rate", pr.ExchangeRate.String())
				}
				t.kv("Minimum transaction", pr.Minimum.String()+" "+pr.Ticker)
				t.kv("Payment URI", pr.PaymentURI)
				t.kv("Callback URL", pr.Address.CallbackURL)
				t.kv("QR code", qrPath)
				return t.flush(a.stdout)
			}
		},
	}
}

// ---- checkout ----

func checkoutCmd() *command {
	return &command{
		name:     "checkout",
		synopsis: "-amount AMOUNT -redirect-url URL [-notify-url URL] [flags]",
		summary:  "create a hosted checkout payment (needs an API key)",
		help: `Creates a hosted checkout page for an order of a fixed value, in the
fiat currency set in the dashboard, and prints the page's URL, the
payment id and the success token. The token comes back in the payment
notification: store it with the order and never show it to the customer.

Needs an API key. It is sent once and never retried: after a network
error, look in the dashboard before creating another.`,
		client:  true,
		noRetry: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			var value decimalFlag
			fs.Var(&value, "amount", "order `amount` in the dashboard's fiat currency (required)")
			alias(fs, "value", "amount")
			redirect := fs.String("redirect-url", "", "`URL` the customer returns to after paying (required)")
			notify := fs.String("notify-url", "", "`URL` that receives the payment notification")
			desc := fs.String("description", "", "item `text` shown on the checkout page")
			expire := fs.String("expire-at", "", "expiry, a `time` (RFC 3339) or a duration from now such as 2h; at least 1h ahead")
			post := fs.Bool("post", false, "send the notification as POST instead of GET")
			return func(ctx context.Context, a *app) error {
				v, err := value.positive("amount")
				if err != nil {
					return err
				}
				if err := required("redirect-url", *redirect); err != nil {
					return err
				}
				exp, err := parseExpiry(*expire, time.Now())
				if err != nil {
					return err
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				ck, err := c.CreateCheckout(ctx, &cryptapi.CheckoutOptions{
					RedirectURL:     strings.TrimSpace(*redirect),
					NotifyURL:       strings.TrimSpace(*notify),
					Value:           v,
					ItemDescription: *desc,
					ExpireAt:        exp,
					Post:            *post,
				})
				if err != nil {
					return notRetried(err)
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						PaymentURL   string `json:"payment_url"`
						PaymentID    string `json:"payment_id"`
						SuccessToken string `json:"success_token"`
					}{ck.PaymentURL, ck.PaymentID, ck.SuccessToken})
				}
				t := newTable()
				t.kv("Payment URL", ck.PaymentURL)
				t.kv("Payment ID", ck.PaymentID)
				t.kv("Success token", ck.SuccessToken)
				return t.flush(a.stdout)
			}
		},
	}
}

// parseExpiry reads -expire-at: empty (no expiry), a duration from now or
// an RFC 3339 time.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < cryptapi.MinCheckoutExpiry {
			return time.Time{}, usagef("-expire-at must be at least 1h ahead")
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("-expire-at must be an RFC 3339 time (2026-12-31T23:00:00Z) or a duration (2h)")
	}
	return t, nil
}

// notRetried adds advice to a transport failure of a call that is never
// retried: the request may have reached the service.
func notRetried(err error) error {
	var (
		ae *cryptapi.APIError
		oe *net.OpError
	)
	if errors.As(err, &ae) || isAny(err, preflight) || errors.Is(err, context.Canceled) ||
		(errors.As(err, &oe) && oe.Op == "dial") {
		// Refused before sending, answered, or never connected.
		return err
	}
	return fmt.Errorf("%w (the request may have reached the service: check the dashboard before sending it again)", err)
}

// ---- deposit ----

func depositCmd() *command {
	return &command{
		name:     "deposit",
		synopsis: "-notify-url URL [-description TEXT] [-post] [flags]",
		summary:  "create a hosted deposit page (needs an API key)",
		help: `Creates a hosted deposit page that accepts any amount, and prints its
URL and payment id. Each deposit is notified to -notify-url.

Needs an API key. It is sent once and never retried.`,
		client:  true,
		noRetry: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			notify := fs.String("notify-url", "", "`URL` that receives a notification per deposit (required)")
			desc := fs.String("description", "", "item `text` shown on the deposit page")
			post := fs.Bool("post", false, "send notifications as POST instead of GET")
			return func(ctx context.Context, a *app) error {
				if err := required("notify-url", *notify); err != nil {
					return err
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				d, err := c.CreateDeposit(ctx, &cryptapi.DepositOptions{
					NotifyURL: strings.TrimSpace(*notify), ItemDescription: *desc, Post: *post,
				})
				if err != nil {
					return notRetried(err)
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						PaymentURL string `json:"payment_url"`
						PaymentID  string `json:"payment_id"`
					}{d.PaymentURL, d.PaymentID})
				}
				t := newTable()
				t.kv("Payment URL", d.PaymentURL)
				t.kv("Payment ID", d.PaymentID)
				return t.flush(a.stdout)
			}
		},
	}
}

// ---- payout ----

func payoutCmd() *command {
	return &command{
		name:     "payout",
		synopsis: "-ticker TICKER (-address ADDRESS -amount AMOUNT | -to ADDRESS=AMOUNT...) [flags]",
		summary:  "request a payout, finished in the dashboard (needs an API key)",
		help: `Requests a payout of -amount to -address, or several at once with
repeated -to ADDRESS=AMOUNT. The merchant finishes payout requests in the
account dashboard.

Needs an API key. A payout moves money, so it is sent once and never
retried, not even after a network error: look in the dashboard before
sending it again.`,
		client:  true,
		noRetry: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			tk := fs.String("ticker", "", "coin or token, e.g. btc or trc20_usdt (required)")
			addr := fs.String("address", "", "destination `address`")
			var value decimalFlag
			fs.Var(&value, "amount", "`amount` to send, in the coin")
			alias(fs, "value", "amount")
			var to listFlag
			fs.Var(&to, "to", "`ADDRESS=AMOUNT` of a bulk payout (repeatable; instead of -address and -amount)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk); err != nil {
					return err
				}
				var (
					outs  map[string]decimal.Decimal
					total decimal.Decimal
				)
				switch {
				case len(to) > 0 && (*addr != "" || value.set):
					return usagef("use -to, or -address with -amount, not both")
				case len(to) > 0:
					outs = make(map[string]decimal.Decimal, len(to))
					for _, s := range to {
						i := strings.LastIndex(s, "=")
						if i <= 0 {
							return usagef("-to must be ADDRESS=AMOUNT")
						}
						ad := strings.TrimSpace(s[:i])
						v, err := parseAmount(s[i+1:])
						if err != nil || !v.IsPositive() {
							return usagef("-to %s: the amount must be a positive decimal number", truncate(ad, 64))
						}
						if _, dup := outs[ad]; dup {
							return usagef("-to %s: the address is given twice", truncate(ad, 64))
						}
						outs[ad] = v
						total = total.Add(v)
					}
				default:
					if err := required("address", *addr); err != nil {
						return err
					}
					v, err := value.positive("amount")
					if err != nil {
						return err
					}
					total = v
				}
				c, err := co.client()
				if err != nil {
					return err
				}
				if !c.HasAPIKey() {
					return cryptapi.ErrAPIKeyRequired
				}
				if outs == nil {
					// One request through the bulk operation: the current
					// scheme, which returns the request id.
					outs = map[string]decimal.Decimal{strings.TrimSpace(*addr): total}
				}
				n := len(outs)
				p, err := c.CreatePayouts(ctx, *tk, outs)
				if err != nil {
					return notRetried(err)
				}
				ids := p.RequestIDs
				if ids == nil {
					ids = []string{}
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						Status     string          `json:"status"`
						Payouts    int             `json:"payouts"`
						Total      decimal.Decimal `json:"total"`
						RequestIDs []string        `json:"request_ids"`
					}{p.Status, n, total, ids})
				}
				t := newTable()
				t.kv("Status", p.Status)
				t.kv("Payouts", fmt.Sprint(n))
				t.kv("Total", total.String()+" "+*tk)
				t.kv("Request IDs", strings.Join(ids, ", "))
				return t.flush(a.stdout)
			}
		},
	}
}
