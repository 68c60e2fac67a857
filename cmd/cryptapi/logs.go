package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

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
				if errors.Is(err, cryptapi.ErrNoLogs) {
					l, err = &cryptapi.Logs{CallbackURL: strings.TrimSpace(*cb), Callbacks: []cryptapi.LoggedPayment{}}, nil
				}
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
