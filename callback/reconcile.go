package callback

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// ErrNoUUID is reported by Reconcile for a logged payment without a uuid.
// Live callbacks are de-duplicated by uuid, so such a payment cannot be
// matched against them and is not processed: handle it by hand.
var ErrNoUUID = errors.New("callback: logged payment has no uuid and cannot be de-duplicated against live callbacks")

// ReconcileReport says what Reconcile did with the payments in the logs.
type ReconcileReport struct {
	// Seen is the number of payments the logs list.
	Seen int
	// Acknowledged payments are done and their confirmed callback was
	// answered "*ok*" by the merchant, as the logs show: a callback was
	// handled, so they are left alone.
	Acknowledged int
	// AlreadyDone payments were found done in the store.
	AlreadyDone int
	// Processed payments were missed and have now been passed to fn.
	Processed int
	// Superseded are pending payments whose confirmation was handled.
	Superseded int
	// Busy payments are being processed elsewhere (a live callback holds
	// the claim); that delivery will finish them.
	Busy int
	// NotReady payments are neither confirmed nor due a pending callback:
	// nothing to do yet.
	NotReady int
	// Failed payments could not be processed; Errors says why.
	Failed int
	// Errors holds one error per failed payment.
	Errors []error
}

// String summarises the report on one line.
func (r ReconcileReport) String() string {
	return fmt.Sprintf("seen %d: processed %d, already done %d, acknowledged %d, superseded %d, busy %d, not ready %d, failed %d",
		r.Seen, r.Processed, r.AlreadyDone, r.Acknowledged, r.Superseded, r.Busy, r.NotReady, r.Failed)
}

// Reconcile recovers callbacks that never arrived. It reads the logs of
// callbackURL (exactly the URL the address was created with, custom
// parameters included: cryptapi.Address.CallbackURL) and turns every
// payment the logs show as confirmed, and, where pending callbacks were
// asked for, every payment still pending, into the Payment the handler
// would have received, custom parameters included. A payment without a
// uuid is not processed (ErrNoUUID in the report): live callbacks are
// keyed by uuid. Each one runs through
// Process with the same store and fn as NewHandler, so a payment that a
// live callback already handled is never handled twice, and one that was
// missed is handled exactly once, even while live callbacks arrive.
//
// Pass the handler's options: WithStore is required (a fresh store would
// know nothing of what the handler did), WithAddressCheck (or
// InsecureSkipAddressCheck) is required as in NewHandler
// (ErrAddressCheckRequired): the logs of a callback URL list the payments
// of whichever address was created with it, and anyone can create one
// that forwards elsewhere. WithLease applies as in the handler. A payment whose result is
// "done" and whose logs show a confirmed delivery answered "*ok*" is
// counted as acknowledged and left alone; any other runs through the store,
// which knows whether it was handled.
//
// The logs are read with cryptapi.Client.LoggedPayments, one payment at a
// time, so an address with any number of payments works with the
// client's default response size limit, and memory stays within a few
// payments. Payments read before a failure in the middle of the logs have
// been processed when Reconcile returns its error; running it again is
// safe, as the store knows them.
//
// Payments from the logs come from the service over the client's
// connection rather than from a signed callback. Logs without payments
// (the service answers "callbacks": [], or its own "nothing found" error,
// cryptapi.ErrNoLogs) are zero payments: an empty report and a nil error.
// The error is non-nil when the logs cannot be read (any other error
// answer, with any HTTP status, or an answer that is not the service's
// JSON) or when any payment failed; the report is complete either way.
func Reconcile(ctx context.Context, c *cryptapi.Client, tickerName, callbackURL string, fn func(context.Context, *Payment) error, opts ...HandlerOption) (ReconcileReport, error) {
	var rep ReconcileReport
	if c == nil || fn == nil {
		return rep, fmt.Errorf("%w: Reconcile needs a client and a function", cryptapi.ErrInvalidOption)
	}
	h := &handler{lease: DefaultLease}
	if err := h.apply(opts); err != nil {
		return rep, err
	}
	if h.store == nil {
		return rep, fmt.Errorf("%w: Reconcile needs the handler's store (WithStore)", cryptapi.ErrInvalidOption)
	}
	t, err := ticker.Parse(tickerName)
	if err != nil {
		return rep, fmt.Errorf("%w: %w", cryptapi.ErrInvalidOption, cryptapi.ErrInvalidTicker)
	}
	// The logs are read one payment at a time, so a busy address does not
	// need them all in memory, and the response size limit applies to each
	// payment. The address is checked once, before the first payment.
	checked := false
	for it, err := range c.LoggedPayments(ctx, t.Key(), callbackURL) {
		if errors.Is(err, cryptapi.ErrNoLogs) {
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("callback: reconcile: %w", err)
		}
		logs, item := it.Logs, it.Payment
		if !checked && h.addressCheck != nil {
			checked = true
			// Payments whose answer names no address_in are checked as "",
			// which no merchant created: refused rather than trusted.
			ok, err := h.addressCheck(ctx, logs.AddressIn)
			if err != nil {
				return rep, fmt.Errorf("callback: reconcile: address check: %w", err)
			}
			if !ok {
				return rep, fmt.Errorf("callback: reconcile: %w", ErrUnknownAddress)
			}
		}
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("callback: reconcile: %w", err)
		}
		stored := logs.CallbackURL
		if stored == "" {
			stored = callbackURL
		}
		rep.Seen++
		if item.Result == cryptapi.ResultDone && acknowledged(item) {
			rep.Acknowledged++
			continue
		}
		if item.UUID == "" {
			rep.Failed++
			rep.Errors = append(rep.Errors, fmt.Errorf("payment with txid_in %q: %w", item.TxIDIn, ErrNoUUID))
			continue
		}
		var pending bool
		switch {
		case item.Confirmed():
		case logs.NotifyPending && item.Result == cryptapi.ResultPending:
			pending = true
		default:
			rep.NotReady++
			continue
		}
		p := paymentFromLogs(logs, item, t.Key(), stored, pending)
		outcome, err := Process(ctx, h.store, h.lease, fn, p)
		switch outcome {
		case Processed:
			rep.Processed++
		case AlreadyDone:
			rep.AlreadyDone++
		case Superseded:
			rep.Superseded++
		case Busy:
			rep.Busy++
		default:
			rep.Failed++
		}
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Errorf("payment %s: %w", PaymentKey(p), err))
		}
	}
	if rep.Failed > 0 {
		return rep, fmt.Errorf("callback: reconcile: %d of %d payments failed: %w", rep.Failed, rep.Seen, errors.Join(rep.Errors...))
	}
	return rep, nil
}

// acknowledged reports whether a confirmed delivery of the payment was
// answered "*ok*", which is what result "done" should mean.
func acknowledged(item *cryptapi.LoggedPayment) bool {
	for _, e := range item.Logs {
		if e.Confirmed && !e.Pending && strings.TrimSpace(e.Responses) == OK {
			return true
		}
	}
	return false
}

// paymentFromLogs builds the Payment a callback would have carried for a
// logged payment. Custom parameters come from the URL the service called
// (the latest logged request_url of that kind), or from the stored
// callback URL.
func paymentFromLogs(l *cryptapi.Logs, item *cryptapi.LoggedPayment, coin, stored string, pending bool) *Payment {
	p := &Payment{
		UUID:          item.UUID,
		AddressIn:     l.AddressIn,
		AddressOut:    l.AddressOut,
		TxIDIn:        item.TxIDIn,
		Coin:          coin,
		Pending:       pending,
		Confirmations: item.Confirmations,
		Price:         item.Price,
		ValueCoin:     item.ValueCoin,
		//lint:ignore SA1019 the deprecated amount is carried over as a callback carries it
		Value: item.Value,
	}
	if p.Price.IsZero() && item.Prices != nil {
		p.Price = item.Prices["USD"]
	}
	if !pending {
		p.TxIDOut = item.TxIDOut
		p.ValueForwardedCoin = item.ValueForwardedCoin
		p.FeeCoin = item.FeeCoin
		//lint:ignore SA1019 the deprecated amount is carried over as a callback carries it
		p.ValueForwarded = item.ValueForwarded
		//lint:ignore SA1019 the deprecated amount is carried over as a callback carries it
		p.Fee = item.Fee
	}
	target := stored
	for j := len(item.Logs) - 1; j >= 0; j-- {
		e := item.Logs[j]
		if e.RequestURL != "" && e.Pending == pending {
			target = e.RequestURL
			break
		}
	}
	p.Custom = callbackurl.Custom(target)
	return p
}
