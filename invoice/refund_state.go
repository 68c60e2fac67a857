package invoice

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
)

// refundEvent carries what a refund event needs; which fields count
// depends on the event's kind.
type refundEvent struct {
	id string // every kind but evRefund
	// evRefund: what the merchant asked, the coin and its precision, the
	// price of one coin in the invoice's currency now (RateNow), and the
	// claim token.
	of       RefundOf
	rate     RefundRate
	amount   decimal.Decimal
	ticker   string
	decimals int32
	price    decimal.Decimal
	token    string
	claimFor time.Duration
	// evRefund, evRefundCancel: the merchant's reason.
	reason string
	// evRefund: the merchant's key for retries.
	key string
	// evRefundAddress
	address string
	// evRefundSend, evRefundResume, evRefundWork, evRefundDone: who sends,
	// and until when its claim holds.
	owner string
	until time.Time
	// evRefundWork: the progress of the payout; release gives the claim
	// up (Tick follows the send from work.CheckAt).
	work    *refundWork
	release bool
	// evRefundDone: sent (with txid) or failed (with the service's
	// failure); payoutID is the payout; keepRequest keeps the attempt's
	// payout request and payout for the next send (still pending or
	// created, they may yet be paid: no second one is asked for).
	sent        bool
	txid        string
	payoutID    string
	failure     string
	keepRequest bool
}

// Errors of the bookkeeping of a send: the claim is held by another
// sender, or this sender's claim was taken over. Nothing is stored.
var (
	errClaimHeld = errors.New("invoice: refund is being sent by another")
	errLostClaim = errors.New("invoice: refund send taken over by another")
)

// quiet reports whether an event is bookkeeping (the progress of a send):
// stored without a new version, and no change for onChange.
func (k eventKind) quiet() bool { return k == evRefundResume || k == evRefundWork }

// bookkeep applies a quiet event: the claim of a send taken over by a
// Tick whose time has come, or the progress of a send recorded by its
// holder. The invoice's state and version do not change.
func bookkeep(r *Record, e event, at time.Time) (*Record, bool, error) {
	re := e.refund
	if re == nil {
		return nil, false, fmt.Errorf("%w: no refund", errBadEvent)
	}
	n := r.clone()
	rf, w := n.refundIn(re.id), n.workOf(re.id)
	if rf == nil || w == nil {
		return nil, false, ErrRefundNotFound
	}
	if rf.Status != RefundSending {
		return nil, false, fmt.Errorf("%w: refund %s is %s", errLostClaim, re.id, rf.Status)
	}
	switch e.kind {
	case evRefundResume:
		if w.Owner != "" && at.Before(w.Until) {
			return nil, false, errClaimHeld
		}
		w.Owner, w.Until = re.owner, re.until
	case evRefundWork:
		if w.Owner != re.owner || re.owner == "" || re.work == nil {
			return nil, false, errLostClaim
		}
		p := re.work
		for _, q := range p.Requests {
			if slices.Contains(w.Requests, q) {
				continue
			}
			for _, o := range n.refunds {
				if o.ID != w.ID && slices.Contains(o.Requests, q) {
					// As the store refuses another invoice's: a payout
					// request pays one refund.
					return nil, false, fmt.Errorf("%w: payout request %s is refund %s's", ErrDuplicate, q, o.ID)
				}
			}
			w.Requests = append(w.Requests, q) // keys are never given up
		}
		w.Step, w.AskedAt, w.RequestID, w.PayoutID, w.CheckAt = p.Step, p.AskedAt, p.RequestID, p.PayoutID, p.CheckAt
		w.Until = re.until
		if re.release {
			w.Owner = ""
		}
	}
	return n, true, nil
}

// applyRefund applies a refund event to n, whose clock has been applied;
// it appends an Event for every change it makes.
func applyRefund(n *Record, e event, at time.Time) error {
	inv := &n.Invoice
	re := e.refund
	if re == nil {
		return fmt.Errorf("%w: no refund", errBadEvent)
	}
	if e.kind == evRefund {
		return createRefund(n, re, at)
	}
	rf, w := n.refundIn(re.id), n.workOf(re.id)
	if rf == nil || w == nil {
		return ErrRefundNotFound
	}
	name := rf.ID[len(inv.ID)+1:]
	switch e.kind {
	case evRefundAddress:
		switch {
		case rf.Status == RefundAwaitingAddress:
		case rf.Address != "" && rf.Address == re.address:
			return nil // the same address again (a form sent twice)
		case rf.Address != "":
			return fmt.Errorf("%w: refund %s has an address already", ErrWrongStatus, rf.ID)
		default:
			return fmt.Errorf("%w: refund %s is %s", ErrWrongStatus, rf.ID, rf.Status)
		}
		if err := cryptapi.ValidateAddress(rf.Ticker, re.address); err != nil {
			return fmt.Errorf("%w: Address: %w", ErrInvalidOptions, err)
		}
		rf.Address, rf.Status = re.address, RefundReady
		addEvent(inv, at, EventRefundAddress, fmt.Sprintf("refund %s: the customer's address %s", name, rf.Address))
	case evRefundSend:
		switch rf.Status {
		case RefundReady, RefundFailed:
		case RefundSending, RefundSent:
			return nil // sent or being sent: as it stands
		case RefundAwaitingAddress:
			return fmt.Errorf("%w: refund %s has no address yet", ErrWrongStatus, rf.ID)
		default:
			return fmt.Errorf("%w: refund %s is %s", ErrWrongStatus, rf.ID, rf.Status)
		}
		if !inv.Status.Final() {
			return fmt.Errorf("%w: the invoice is %s", ErrWrongStatus, inv.Status)
		}
		received, _ := inv.received(rf.Ticker)
		if left := received.Sub(inv.refunded(rf.Ticker, rf.ID)); rf.Amount.GreaterThan(left) {
			return fmt.Errorf("%w: refund %s is %s %s, and %s %s is left to refund", ErrNotRefundable, rf.ID, rf.Amount, rf.Ticker, left, rf.Ticker)
		}
		rf.Status, rf.Failure = RefundSending, ""
		// The request and payout the last send kept (still pending or
		// created at the service) are used again: never a second one.
		w.Owner, w.Until, w.CheckAt, w.Step, w.AskedAt = re.owner, re.until, time.Time{}, "", time.Time{}
		w.Attempt++
		addEvent(inv, at, EventRefundSending, fmt.Sprintf("refund %s: sending %s %s to %s from the payout wallet (attempt %d)",
			name, rf.Amount, rf.Ticker, rf.Address, w.Attempt))
	case evRefundDone:
		if rf.Status != RefundSending || w.Owner != re.owner || re.owner == "" {
			return fmt.Errorf("%w: refund %s", errLostClaim, rf.ID)
		}
		rf.PayoutID = re.payoutID
		w.Owner, w.Until, w.CheckAt, w.Step, w.AskedAt = "", time.Time{}, time.Time{}, "", time.Time{}
		if re.sent {
			rf.Status, rf.TxID = RefundSent, re.txid
			addEvent(inv, at, EventRefundSent, fmt.Sprintf("refund %s: %s %s sent to %s, txid %s, payout %s",
				name, rf.Amount, rf.Ticker, rf.Address, rf.TxID, rf.PayoutID))
			break
		}
		rf.Status, rf.Failure = RefundFailed, reason(re.failure, "the service reports the payout failed")
		if !re.keepRequest {
			w.RequestID, w.PayoutID = "", ""
		}
		addEvent(inv, at, EventRefundFailed, fmt.Sprintf("refund %s: not sent: %s", name, rf.Failure))
	case evRefundMarkSent:
		switch {
		case rf.Status == RefundReady:
		case rf.Status == RefundSent && rf.TxID == re.txid:
			return nil // recorded already
		default:
			return fmt.Errorf("%w: only a ready refund can be marked sent; refund %s is %s", ErrWrongStatus, rf.ID, rf.Status)
		}
		rf.Status, rf.TxID = RefundSent, re.txid
		addEvent(inv, at, EventRefundSent, fmt.Sprintf("refund %s: %s %s sent to %s by the merchant, txid %s",
			name, rf.Amount, rf.Ticker, rf.Address, rf.TxID))
	case evRefundCancel:
		switch rf.Status {
		case RefundAwaitingAddress, RefundReady, RefundFailed:
		case RefundCancelled:
			return nil
		default:
			return fmt.Errorf("%w: refund %s is %s and cannot be cancelled", ErrWrongStatus, rf.ID, rf.Status)
		}
		rf.Status = RefundCancelled
		addEvent(inv, at, EventRefundCancelled, fmt.Sprintf("refund %s: %s", name, reason(re.reason, "cancelled by the merchant")))
	default:
		return fmt.Errorf("%w: unknown refund event %d", errBadEvent, e.kind)
	}
	rf.UpdatedAt = at
	return nil
}

// createRefund adds a refund computed from the invoice as it stands.
func createRefund(n *Record, re *refundEvent, at time.Time) error {
	inv := &n.Invoice
	if re.token == "" || re.claimFor <= 0 || re.ticker == "" {
		return fmt.Errorf("%w: refund needs a token, a claim time and a coin", errBadEvent)
	}
	if rf := inv.refundByKey(re.key); rf != nil {
		return rf.sameAsked(re) // made before: no change
	}
	amount, quote, err := refundAmount(inv, re)
	if err != nil {
		return err
	}
	if !inv.Status.Final() {
		return fmt.Errorf("%w: the invoice is %s and still waits for payment: invalidate it before refunding", ErrWrongStatus, inv.Status)
	}
	id := refundID(inv.ID, len(inv.Refunds)+1)
	rf := Refund{
		ID: id, InvoiceID: inv.ID, Ticker: re.ticker, Reason: re.reason, Key: re.key, Amount: amount,
		Status: RefundAwaitingAddress, ClaimPath: PageClaimPath + "/" + re.token,
		ClaimExpiresAt: at.Add(re.claimFor), CreatedAt: at, UpdatedAt: at, Of: re.of, Rate: re.rate,
	}
	if quote.IsPositive() {
		rf.Quote, rf.FiatValue = quote, amount.Mul(quote)
	}
	inv.Refunds = append(inv.Refunds, rf)
	n.refunds = append(n.refunds, refundWork{ID: id, Token: re.token})
	how := string(re.of)
	if re.rate != "" {
		how += ", at the rate " + string(re.rate)
	}
	note := fmt.Sprintf("refund %s: %s %s (%s)", id[len(inv.ID)+1:], amount, re.ticker, how)
	if re.reason != "" {
		note += ": " + re.reason
	}
	addEvent(inv, at, EventRefundCreated, note+"; awaiting the customer's address")
	return nil
}

// refundAmount computes what a new refund gives back, in re.ticker,
// rounded down to the coin's precision (never more than was received),
// and the price it was converted at (RateNow), or refuses it with
// ErrNotRefundable saying what is left.
func refundAmount(inv *Invoice, re *refundEvent) (amount, quote decimal.Decimal, err error) {
	coin, places := re.ticker, re.decimals
	received, pending := inv.received(coin)
	refunded := inv.refunded(coin, "")
	left := received.Sub(refunded)
	unconfirmed := unconfirmedNote(coin, pending)
	switch {
	case !received.IsPositive():
		return amount, quote, notReceived(coin, pending)
	case !left.IsPositive():
		return amount, quote, fmt.Errorf("%w: everything received (%s %s) is refunded or being refunded%s", ErrNotRefundable, received, coin, unconfirmed)
	}
	switch re.of {
	case RefundCustom:
		if !re.amount.IsPositive() || !re.amount.Equal(re.amount.Truncate(places)) {
			return amount, quote, fmt.Errorf("%w: refund amount %s", errBadEvent, re.amount)
		}
		if re.amount.GreaterThan(left) {
			return amount, quote, fmt.Errorf("%w: %s %s asked, %s %s is left to refund (%s received, %s refunded or being refunded)%s",
				ErrNotRefundable, re.amount, coin, left, coin, received, refunded, unconfirmed)
		}
		return re.amount, quote, nil
	case RefundAll:
		amount = left
	case RefundOverpaid:
		excess, _ := excessThen(inv, coin, places)
		amount = excess.Sub(refunded)
		if !amount.IsPositive() {
			if !excess.IsPositive() {
				return decimal.Zero, quote, fmt.Errorf("%w: nothing confirmed was paid over the price in %s%s", ErrNotRefundable, coin, unconfirmed)
			}
			return decimal.Zero, quote, fmt.Errorf("%w: the excess (%s %s) is refunded or being refunded", ErrNotRefundable, excess, coin)
		}
		amount = decimal.Min(amount, left)
	default:
		return amount, quote, fmt.Errorf("%w: unknown refund %q", errBadEvent, re.of)
	}
	if re.rate == RateNow && inv.valued(coin) && inv.Currency != "" {
		if !re.price.IsPositive() {
			return decimal.Zero, quote, fmt.Errorf("%w: RateNow needs a price", errBadEvent)
		}
		// What arrived in the coin at another coin's address was never
		// valued: it goes back whole, first (earlier refunds in the coin
		// count against it first, as against the excess). The rest is worth its fiat
		// value at the quotes it was received at (the coin's confirmed
		// valued payments' own, or those of the excess alone for
		// RefundOverpaid), at today's price.
		coins, fiat, stray := decimal.Zero, decimal.Zero, decimal.Zero
		for _, rc := range inv.Payments {
			if !rc.Confirmed || !callbackurl.EqualFoldASCII(rc.Coin, coin) {
				continue
			}
			if rc.WrongCoin {
				stray = stray.Add(rc.Amount)
			} else {
				fiat, coins = fiat.Add(rc.FiatValue), coins.Add(rc.Amount)
			}
		}
		if re.of == RefundOverpaid {
			coins, fiat = excessThen(inv, coin, places)
			coins = coins.Sub(stray)
		}
		whole := decimal.Min(amount, decimal.Max(stray.Sub(refunded), decimal.Zero))
		if rest := amount.Sub(whole); coins.IsPositive() && rest.IsPositive() {
			now, _ := rest.Mul(fiat).QuoRem(coins.Mul(re.price), places)
			amount = whole.Add(decimal.Min(now, rest))
		}
		quote = re.price
	}
	if !amount.IsPositive() {
		return decimal.Zero, quote, fmt.Errorf("%w: less than the smallest unit of %s is left to refund", ErrNotRefundable, coin)
	}
	return amount, quote, nil
}

// notReceived refuses a refund in coin, of which nothing confirmed was
// received (pending is what is not confirmed yet); coin is "" for an
// invoice whose customer chose no coin.
func notReceived(coin string, pending decimal.Decimal) error {
	if coin == "" {
		return fmt.Errorf("%w: nothing confirmed was received: the customer chose no coin", ErrNotRefundable)
	}
	return fmt.Errorf("%w: nothing confirmed was received in %s%s", ErrNotRefundable, coin, unconfirmedNote(coin, pending))
}

// unconfirmedNote says, in an error, what of coin is not confirmed yet.
func unconfirmedNote(coin string, pending decimal.Decimal) string {
	if !pending.IsPositive() {
		return ""
	}
	return fmt.Sprintf("; %s %s is not confirmed yet and cannot be refunded until it is", pending, coin)
}

// excessThen is what the confirmed payments in coin brought beyond the
// price, rounded down to places, and its fiat value. The valued payments
// (in the invoice's coin and in every coin the customer chose), each at
// the quote it was received at, pay the price in the order they were
// seen; what each brought beyond it is excess in its own coin, valued at
// its quote. A payment in a coin that was not valued (a wrong coin) is all
// excess, and not valued.
func excessThen(inv *Invoice, coin string, places int32) (excess, fiat decimal.Decimal) {
	if inv.Currency == "" {
		received, _ := inv.received(coin)
		if coin != inv.Ticker {
			return received, decimal.Zero
		}
		return decimal.Max(received.Sub(inv.Price), decimal.Zero), decimal.Zero
	}
	excess, fiat, cum := decimal.Zero, decimal.Zero, decimal.Zero
	for _, rc := range inv.Payments {
		if !rc.Confirmed {
			continue
		}
		mine := callbackurl.EqualFoldASCII(rc.Coin, coin)
		if rc.WrongCoin {
			if mine {
				excess = excess.Add(rc.Amount)
			}
			continue
		}
		part, partFiat := decimal.Zero, decimal.Zero
		switch next := cum.Add(rc.FiatValue); {
		case !cum.LessThan(inv.Price):
			part, partFiat = rc.Amount, rc.FiatValue
		case next.GreaterThan(inv.Price) && rc.Rate.IsPositive():
			part, _ = next.Sub(inv.Price).QuoRem(rc.Rate, places)
			part = decimal.Min(part, rc.Amount)
			partFiat = part.Mul(rc.Rate)
		}
		if mine {
			excess, fiat = excess.Add(part), fiat.Add(partFiat)
		}
		cum = cum.Add(rc.FiatValue)
	}
	return excess, fiat
}

// expireClaims cancels the refunds whose claim link expired unused by at.
func expireClaims(n *Record, at time.Time) {
	inv := &n.Invoice
	for i := range inv.Refunds {
		rf := &inv.Refunds[i]
		if rf.Status == RefundAwaitingAddress && !at.Before(rf.ClaimExpiresAt) {
			rf.Status, rf.UpdatedAt = RefundCancelled, rf.ClaimExpiresAt
			addEvent(inv, rf.ClaimExpiresAt, EventRefundCancelled,
				fmt.Sprintf("refund %s: the claim link expired without an address", rf.ID[len(inv.ID)+1:]))
		}
	}
}

// sameRefunds reports whether two invoices hold the same refunds.
func sameRefunds(a, b []Refund) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Status != y.Status || x.Address != y.Address || x.TxID != y.TxID ||
			x.PayoutID != y.PayoutID || x.Failure != y.Failure || !x.Amount.Equal(y.Amount) {
			return false
		}
	}
	return true
}
