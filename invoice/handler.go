package invoice

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/refuse"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// Handler returns the http.Handler for the shop's callback URL (the
// Callback of CreateOptions). For each callback it:
//
//  1. verifies the signature and parses the payment (v);
//  2. finds the invoice by the ID in the callback URL, and refuses the
//     callback with 403, touching no invoice, unless the nonce in the URL
//     is that invoice's and the signed address_in is its address;
//  3. runs the payment through callback.Process with the store's
//     callback store, so each (uuid, pending/confirmed) is applied once:
//     the transition records the payment (or its confirmation) and the
//     store keeps the new invoice and marks the callback done at once;
//  4. passes every stored change of the invoice not yet passed on to the
//     Desk's onChange (WithOnChange), oldest first, once each.
//
// It answers "*ok*" only when the payment is recorded (now or before) and
// onChange accepted every change; otherwise 500 (or 503 while another
// delivery holds the payment), and the service delivers again: a change
// onChange refused is offered again then (and by Tick), and a duplicate
// changes nothing. Refusals are logged (see WithLogger).
//
// The Desk creates addresses with GET callbacks, whose signature covers
// the URL the service called: v must know the shop's public URL
// (callback.WithPublicURL). Handler fails with an error wrapping
// callback.ErrPublicURLRequired (and ErrInvalidOptions) when it does not,
// since such a handler could only refuse every callback.
func (d *Desk) Handler(v *callback.Verifier) (http.Handler, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: Handler needs a Verifier", ErrInvalidOptions)
	}
	if v.PublicURL() == "" {
		return nil, fmt.Errorf("%w: %w (the Desk's callbacks are GET requests)", ErrInvalidOptions, callback.ErrPublicURLRequired)
	}
	return &handler{d: d, v: v}, nil
}

type handler struct {
	d *Desk
	v *callback.Verifier
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := h.v.ReadPayment(w, r, h.d.readTimeout)
	if err != nil {
		if errors.Is(err, callback.ErrBodyTimeout) {
			w.Header().Set("Connection", "close")
		}
		h.refuse(ctx, w, callback.StatusCode(err), "", err)
		return
	}
	rec, err := h.d.match(ctx, p)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, ErrUnknownInvoice) {
			status = http.StatusForbidden
		}
		h.refuse(ctx, w, status, "", err)
		return
	}
	id := rec.ID()
	e, err := paymentEvent(&rec.Invoice, p)
	if err != nil {
		h.refuse(ctx, w, http.StatusBadRequest, id, err)
		return
	}
	outcome, perr := h.d.process(ctx, id, e, p)
	nerr := h.d.notify(ctx, id)
	switch {
	case outcome.Acknowledge() && nerr == nil:
		if perr != nil {
			h.d.logError(ctx, "invoice callback applied but not recorded as done", id, perr)
		}
		callback.WriteOK(w)
	case outcome == callback.Busy:
		h.refuse(ctx, w, http.StatusServiceUnavailable, id, errors.Join(errors.New("invoice: payment is being applied elsewhere"), perr, nerr))
	default:
		h.refuse(ctx, w, http.StatusInternalServerError, id, errors.Join(perr, nerr))
	}
}

func (h *handler) refuse(ctx context.Context, w http.ResponseWriter, status int, id string, err error) {
	var attrs []slog.Attr
	if id != "" {
		attrs = append(attrs, slog.String("invoice", id))
	}
	refuse.Write(ctx, w, h.d.logger(), status, "GET, POST", "invoice callback not acknowledged", err, attrs...)
}

// process applies one payment through callback.Process with the store's
// callback store.
func (d *Desk) process(ctx context.Context, id string, e event, p *callback.Payment) (callback.Outcome, error) {
	return callback.Process(ctx, d.store.Callbacks(), d.lease, func(ctx context.Context, p *callback.Payment) error {
		_, _, err := d.apply(ctx, id, callback.PaymentKey(p), e)
		return err
	}, p)
}

// match finds the invoice a verified callback is for: by the ID in its
// custom parameters, with that invoice's nonce and one of its addresses
// (its current one, or that of a coin the customer chose before).
// Anything else is ErrUnknownInvoice.
func (d *Desk) match(ctx context.Context, p *callback.Payment) (*Record, error) {
	custom := p.Custom
	ids, nonces := custom[ParamInvoice], custom[ParamNonce]
	if len(ids) != 1 || len(nonces) != 1 || !validID(ids[0]) || nonces[0] == "" {
		return nil, ErrUnknownInvoice
	}
	rec, err := d.store.Load(ctx, ids[0])
	if errors.Is(err, ErrNotFound) {
		return nil, ErrUnknownInvoice
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(nonces[0]), []byte(rec.nonce)) != 1 || !rec.Invoice.ownsAddress(p.AddressIn) {
		return nil, ErrUnknownInvoice
	}
	return rec, nil
}

// validID accepts what the Desk generates (and a little more), so that
// junk never reaches the store.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// paymentEvent turns a verified payment into the transition's event. The
// coin is the callback's, in "trc20_usdt" form; a callback without one is
// in the coin of the address paid unless the address accepts other
// tokens, where it counts as a wrong coin (never at face value).
func paymentEvent(inv *Invoice, p *callback.Payment) (event, error) {
	if p.UUID == "" {
		return event{}, fmt.Errorf("%w: payment without uuid", errBadEvent)
	}
	if !p.ValueCoin.IsPositive() {
		return event{}, fmt.Errorf("%w: payment without a positive value_coin", errBadEvent)
	}
	coin := normCoin(p.Coin)
	if coin == "" && !inv.MultiToken {
		coin = inv.tickerAt(p.AddressIn)
	}
	e := event{kind: evPayment, uuid: p.UUID, txid: p.TxIDIn, coin: coin, amount: p.ValueCoin, confirmed: !p.Pending,
		address: p.AddressIn}
	if e.confirmed {
		e.txidOut, e.fee, e.forwarded = p.TxIDOut, p.FeeCoin, p.ValueForwardedCoin
	}
	return e, nil
}

// normCoin writes a callback's coin in "trc20_usdt" form; what is not a
// ticker is kept as it is (and is never the invoice's coin: coins are
// compared in ASCII case only, so a look-alike such as "trc20_uſdt", long
// s, is another coin).
func normCoin(s string) string {
	s = strings.TrimSpace(s)
	if t, err := ticker.Parse(s); err == nil {
		return t.Key()
	}
	return s
}

// Reconcile recovers the invoice's callbacks that never arrived: it reads
// the service's logs of the invoice's callback URL (for an invoice with
// Coins, of each coin the customer chose) and runs every payment
// they show as confirmed (or, still pending, as seen) through the same path
// as Handler: the same callback store (a payment a live callback applied
// is not applied again), the same transition, and the Desk's onChange,
// and returns the invoice (what time changes is Tick's). The coin of a
// logged payment is read from the URL the service called; a payment
// without a uuid, or to a MultiToken address whose coin the logs do not
// show, is not applied and makes the error non-nil (callback.ErrNoUUID,
// ErrCoinUnknown), as does any payment that failed. An invoice whose
// addresses have received nothing (or that has none yet) is returned
// unchanged.
func (d *Desk) Reconcile(ctx context.Context, id string) (*Invoice, error) {
	r, err := d.load(ctx, id)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range r.addresses() {
		logs, err := d.c.Logs(ctx, a.ticker, a.callbackURL)
		switch {
		case err == nil:
			if logs.AddressIn != "" && logs.AddressIn != a.addressIn {
				return nil, fmt.Errorf("invoice: reconcile: the logs are of address %q, not the invoice's", logs.AddressIn)
			}
			errs = append(errs, d.replay(ctx, r, a, logs)...)
		case errors.Is(err, cryptapi.ErrNoLogs):
			// The service answers "nothing found" for an address without
			// payments.
		default:
			return nil, fmt.Errorf("invoice: reconcile: %w", err)
		}
	}
	if err := d.notify(ctx, id); err != nil {
		errs = append(errs, err)
	}
	cur, err := d.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return cur.Invoice.Clone(), fmt.Errorf("invoice: reconcile: %w", errors.Join(errs...))
	}
	return cur.Invoice.Clone(), nil
}

// payAddress is one payment address of an invoice: its coin and the
// callback URL the service calls for it.
type payAddress struct {
	ticker, addressIn, callbackURL string
}

// addresses are the record's payment addresses: its address, or, for an
// invoice with Coins, that of every coin chosen so far.
func (r *Record) addresses() []payAddress {
	inv := &r.Invoice
	if len(inv.Coins) == 0 {
		return []payAddress{{inv.Ticker, inv.AddressIn, r.callbackURL}}
	}
	var out []payAddress
	for i, c := range inv.Coins {
		if c.AddressIn != "" {
			out = append(out, payAddress{c.Ticker, c.AddressIn, r.coins[i].CallbackURL})
		}
	}
	return out
}

func (d *Desk) replay(ctx context.Context, r *Record, a payAddress, logs *cryptapi.Logs) []error {
	inv := &r.Invoice
	var errs []error
	for i := range logs.Callbacks {
		if err := ctx.Err(); err != nil {
			return append(errs, err)
		}
		item := &logs.Callbacks[i]
		if item.UUID == "" {
			errs = append(errs, fmt.Errorf("payment with txid_in %q: %w", item.TxIDIn, callback.ErrNoUUID))
			continue
		}
		var pending bool
		switch {
		case item.Confirmed():
		case logs.NotifyPending && item.Result == cryptapi.ResultPending:
			pending = true
		default:
			continue // not confirmed and no pending callback due: nothing yet
		}
		coin := loggedCoin(item)
		if coin == "" {
			if inv.MultiToken {
				errs = append(errs, fmt.Errorf("payment %s: %w", item.UUID, ErrCoinUnknown))
				continue
			}
			coin = a.ticker
		}
		p := &callback.Payment{
			UUID: item.UUID, AddressIn: a.addressIn, AddressOut: logs.AddressOut, TxIDIn: item.TxIDIn,
			Coin: coin, Pending: pending, Confirmations: item.Confirmations, ValueCoin: item.ValueCoin,
		}
		if !pending {
			p.TxIDOut, p.ValueForwardedCoin, p.FeeCoin = item.TxIDOut, item.ValueForwardedCoin, item.FeeCoin
		}
		e, err := paymentEvent(inv, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", item.UUID, err))
			continue
		}
		o, err := d.process(ctx, inv.ID, e, p)
		if !o.Acknowledge() && o != callback.Busy {
			errs = append(errs, fmt.Errorf("payment %s: %s: %w", callback.PaymentKey(p), o, err))
		}
	}
	return errs
}

// loggedCoin reads the coin from the URLs the service called for a
// payment (GET callbacks carry every field in the URL), "" if none shows
// it.
func loggedCoin(item *cryptapi.LoggedPayment) string {
	for j := len(item.Logs) - 1; j >= 0; j-- {
		q, ok := callbackurl.Query(item.Logs[j].RequestURL)
		if !ok {
			continue
		}
		if c := normCoin(q.Get("coin")); c != "" {
			return c
		}
	}
	return ""
}
