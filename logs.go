package cryptapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// Result is the state of a payment in the logs. Values the SDK does not
// know are kept as they are.
type Result string

// Known results.
const (
	// ResultPending is the state while the customer's transaction is
	// still being confirmed.
	ResultPending Result = "pending"
	// ResultSent is the state of a forwarded payment whose callback the
	// merchant has not answered with "*ok*".
	ResultSent Result = "sent"
	// ResultDone is the state of a forwarded payment whose callback was
	// answered with "*ok*".
	ResultDone Result = "done"
)

// Known reports whether r is one of the documented results.
func (r Result) Known() bool {
	return r == ResultPending || r == ResultSent || r == ResultDone
}

// Logs is the answer of the logs operation: the setup of a callback URL
// and every payment made to its address, with delivery attempts.
type Logs struct {
	// AddressIn is the payment address the callback URL owns.
	AddressIn string
	// AddressOut is the destination as the service writes it: one address,
	// or shares such as {"addr1": 0.7, "addr2": 0.3}.
	AddressOut string
	// Outputs is AddressOut parsed; empty if unparseable.
	Outputs []Output
	// CallbackURL is the callback URL, as the address was created with.
	CallbackURL string
	// Status is the service's status field, "success" for an answer.
	Status string
	// NotifyPending tells whether pending callbacks were asked for.
	NotifyPending bool
	// NotifyConfirmations is the confirmations count of the confirmed callback.
	NotifyConfirmations int
	// Priority is the forwarding fee level of the address.
	Priority string
	// Callbacks holds one item per payment to the address.
	Callbacks []LoggedPayment
}

// LoggedPayment is one payment in the logs (one entry of Logs.Callbacks).
type LoggedPayment struct {
	// UUID identifies the payment. When it is absent, identify the payment
	// by TxIDIn and ValueCoin.
	UUID string
	// TxIDIn is the customer's transaction to the payment address.
	TxIDIn string
	// TxIDOut is the forwarding transaction; empty until forwarded.
	TxIDOut string
	// ValueCoin is the amount received, before fees.
	ValueCoin decimal.Decimal
	// ValueForwardedCoin is the amount forwarded, after fees.
	ValueForwardedCoin decimal.Decimal
	// FeeCoin is the service fee in coin units.
	FeeCoin decimal.Decimal
	// FeePercent is the service fee percentage.
	FeePercent decimal.Decimal
	// Confirmations is the number of confirmations of TxIDIn seen.
	Confirmations int
	// LastUpdate is last_update, read as UTC.
	LastUpdate time.Time
	// Result is pending, sent or done. It alone does not say whether the
	// payment is confirmed: use Confirmed.
	Result Result
	// Price is "prices" when the service sends one number (the coin's USD
	// price).
	Price decimal.Decimal
	// Prices is "prices" when the service sends a map of currencies,
	// keyed by code such as "USD".
	Prices map[string]decimal.Decimal
	// Value, ValueForwarded and Fee are smallest-unit integers.
	//
	// Deprecated: use ValueCoin, ValueForwardedCoin and FeeCoin.
	Value, ValueForwarded, Fee decimal.Decimal
	// Logs are the delivery attempts to the callback URL.
	Logs []LogEntry
}

// Confirmed follows the specification's rule: a payment is confirmed when
// any log entry shows a confirmed, non-pending delivery.
func (p *LoggedPayment) Confirmed() bool {
	for _, l := range p.Logs {
		if l.Confirmed && !l.Pending {
			return true
		}
	}
	return false
}

// LogEntry is one delivery attempt of a callback.
type LogEntry struct {
	// RequestURL is the exact URL that was called back, custom parameters
	// included.
	RequestURL string
	// Responses is the body the merchant's server answered, e.g. "*ok*".
	Responses string
	// ResponseStatus is the HTTP status the merchant's server answered.
	ResponseStatus string
	// NextTry is when the service tries again; zero when it will not.
	NextTry time.Time
	// Pending is true for a pending callback.
	Pending bool
	// Confirmed is true for a confirmed callback. When the service omits
	// it, it is taken as the opposite of Pending.
	Confirmed bool
}

// UnmarshalJSON decodes a log entry.
func (e *LogEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		RequestURL     wire.String `json:"request_url"`
		Responses      wire.String `json:"responses"`
		Response       wire.String `json:"response"`
		ResponseStatus wire.String `json:"response_status"`
		NextTry        wire.Time   `json:"next_try"`
		Pending        *wire.Bool  `json:"pending"`
		Confirmed      *wire.Bool  `json:"confirmed"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = LogEntry{
		RequestURL:     string(w.RequestURL),
		Responses:      string(w.Responses),
		ResponseStatus: string(w.ResponseStatus),
		NextTry:        w.NextTry.T(),
	}
	if e.Responses == "" {
		e.Responses = string(w.Response)
	}
	if w.Pending != nil {
		e.Pending = bool(*w.Pending)
	}
	switch {
	case w.Confirmed != nil:
		e.Confirmed = bool(*w.Confirmed)
	case w.Pending != nil:
		e.Confirmed = !e.Pending
	}
	return nil
}

// CustomParams returns the query parameters of RequestURL that are not the
// service's callback fields: the merchant's own data.
func (e *LogEntry) CustomParams() url.Values {
	return callbackurl.Custom(e.RequestURL)
}

// UnmarshalJSON decodes a payment item.
func (p *LoggedPayment) UnmarshalJSON(b []byte) error {
	var w struct {
		UUID               wire.String     `json:"uuid"`
		TxIDIn             wire.String     `json:"txid_in"`
		TxIDOut            wire.String     `json:"txid_out"`
		Value              wire.Amount     `json:"value"`
		ValueCoin          wire.Amount     `json:"value_coin"`
		ValueForwarded     wire.Amount     `json:"value_forwarded"`
		ValueForwardedCoin wire.Amount     `json:"value_forwarded_coin"`
		Confirmations      wire.Int        `json:"confirmations"`
		LastUpdate         wire.Time       `json:"last_update"`
		Result             wire.String     `json:"result"`
		FeePercent         wire.Amount     `json:"fee_percent"`
		Fee                wire.Amount     `json:"fee"`
		FeeCoin            wire.Amount     `json:"fee_coin"`
		Prices             json.RawMessage `json:"prices"`
		Logs               []LogEntry      `json:"logs"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = LoggedPayment{
		UUID:               string(w.UUID),
		TxIDIn:             string(w.TxIDIn),
		TxIDOut:            string(w.TxIDOut),
		Value:              w.Value.D(),
		ValueCoin:          w.ValueCoin.D(),
		ValueForwarded:     w.ValueForwarded.D(),
		ValueForwardedCoin: w.ValueForwardedCoin.D(),
		Confirmations:      int(w.Confirmations),
		LastUpdate:         w.LastUpdate.T(),
		Result:             Result(w.Result),
		FeePercent:         w.FeePercent.D(),
		Fee:                w.Fee.D(),
		FeeCoin:            w.FeeCoin.D(),
		Logs:               w.Logs,
	}
	if len(w.Prices) > 0 && (w.Prices[0] == '{' || w.Prices[0] == '[') {
		// A map of currencies; [] is the service's empty map.
		var m wire.AmountMap
		if err := json.Unmarshal(w.Prices, &m); err != nil {
			return err
		}
		p.Prices = m
	} else if len(w.Prices) > 0 {
		d, err := wire.DecodeDecimal(w.Prices)
		if err != nil {
			return err
		}
		p.Price = d
	}
	return nil
}

// UnmarshalJSON decodes the logs answer, with the decoder Logs streams
// the answer through.
func (l *Logs) UnmarshalJSON(b []byte) error {
	var items []LoggedPayment
	head, err := decodeLogsStream(bytes.NewReader(b), &statusEnvelope{}, func(_ *Logs, p *LoggedPayment) error {
		items = append(items, *p)
		return nil
	})
	if err != nil {
		return err
	}
	head.Callbacks = items
	*l = *head
	return nil
}

func (l *Logs) apiStatus() string { return l.Status }

// Logs lists the payments and callback deliveries recorded for
// callbackURL, which must be exactly the URL the address was created with
// (CreateOptions.Callback with Params merged; Address.CallbackURL holds it).
//
// A URL without payments is answered in one of two ways: a success with
// "callbacks": [] (a known address without payments: a *Logs with no
// Callbacks and a nil error), or the service's "nothing found" error
// (which also means an unknown URL): an error matching ErrNoLogs. Every
// other failure is an error that does not match ErrNoLogs.
//
// The answer is decoded as it arrives, so the response size limit applies
// to each payment record rather than to the whole answer; the result holds
// every payment. To go through the payments of a busy address without
// holding them all, use LoggedPayments.
func (c *Client) Logs(ctx context.Context, ticker, callbackURL string) (*Logs, error) {
	var items []LoggedPayment
	head, err := c.logsEach(ctx, ticker, callbackURL, func(_ *Logs, p *LoggedPayment) error {
		items = append(items, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []LoggedPayment{}
	}
	head.Callbacks = items
	return head, nil
}

// noLogsMessage is the service's answer to a logs request that found
// nothing, as the specification words it.
const noLogsMessage = "no request or no payment callbacks found"

// LogsItem is one payment of a logs answer, as LoggedPayments yields it.
type LogsItem struct {
	// Logs holds the fields of the answer: the address, its destination,
	// the callback URL and its settings. Its Callbacks is nil.
	Logs *Logs
	// Payment is the payment.
	Payment *LoggedPayment
}

// LoggedPayments reads the logs of callbackURL like Logs, but yields the
// payments one at a time, in order, as the answer arrives, instead of
// holding them all: memory stays within a few payment records however
// many payments the address has, and the response size limit
// (WithMaxResponseBytes) applies to each payment record and to each other
// field of the answer. Each item holds the answer's fields too, complete
// when the item is yielded, and is the caller's to keep.
//
// An error ends the sequence: it is yielded once, with a zero item. A URL
// without payments yields nothing for "callbacks": [], and an error
// matching ErrNoLogs for the service's "nothing found" answer. An answer
// whose status is "error" is an *APIError, yielded before any payment
// when the status precedes the callbacks. Stopping the loop early stops
// the reading.
func (c *Client) LoggedPayments(ctx context.Context, ticker, callbackURL string) iter.Seq2[LogsItem, error] {
	return func(yield func(LogsItem, error) bool) {
		stopped := false
		_, err := c.logsEach(ctx, ticker, callbackURL, func(h *Logs, p *LoggedPayment) error {
			head, payment := *h, *p
			if !yield(LogsItem{Logs: &head, Payment: &payment}, nil) {
				stopped = true
				return errStopped
			}
			return nil
		})
		if err != nil && !stopped {
			yield(LogsItem{}, err)
		}
	}
}

// errStopped ends the reading of the logs when the caller's loop stops.
var errStopped = errors.New("cryptapi: logs: the loop stopped")

// isNothingFound recognises the logs operation's "nothing found" answer:
// {"status":"error","error":"No request or no payment callbacks found"}
// with HTTP 200 or 404, and nothing else.
func isNothingFound(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || (ae.StatusCode != http.StatusOK && ae.StatusCode != http.StatusNotFound) {
		return false
	}
	var env struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if json.Unmarshal(ae.Body, &env) != nil || env.Status != "error" {
		return false
	}
	return strings.EqualFold(strings.TrimSuffix(strings.TrimSpace(env.Error), "."), noLogsMessage)
}
