package invoice

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// RefundCheckEvery is how often Tick looks at the payout of a refund
// being sent.
const RefundCheckEvery = 30 * time.Second

// SendRefund sends a ready refund from the payout wallet (the API-key
// form), through the client's payout calls, which go out at most once:
// one payout request (CreatePayouts), one payout made of it
// (CreatePayoutFromRequests), queued once (ProcessPayout). The refund is
// sending until the service reports the payout done (then sent, with its
// TxID) or failed (failed, with the service's reason in Failure and
// Events; a failed refund may be sent again by a new SendRefund, when
// what is left to refund still covers it, or cancelled). SendRefund
// returns the refund as it stands: usually sending, while the payout is
// processed; Tick follows it from there (run Desk.Run).
//
// At most once. The send is claimed under the store's lock: SendRefund
// called again, concurrently on any number of replicas, or retried after
// a timeout, returns the refund as it stands and asks for no second
// payout. Each money call is recorded in the store before it is made,
// and its answer after, so whoever carries the send on (this call, or a
// Tick once this call's claim lapsed, should its process die) knows what
// may have been asked and reads the service instead of asking again.
// Money moves only when the one payout of the send is processed, and a
// payout pays once.
//
// Outcome unknown. When a payout call fails after it may have reached the
// service (its error matches cryptapi.ErrOutcomeUnknown, and so does
// SendRefund's), the refund stays sending, and no payout is asked for
// again blindly: Tick reads the service's payout requests and payouts to
// learn what happened (a payout request found pending for the refund's
// address and amount is used; a payout of the send is followed to its
// end) and carries on. The merchant does nothing but keep Tick running.
// Should a refund stay sending for long, look at the payout wallet's
// payouts in the service's dashboard: a payout request the SDK did not
// use stays pending and moves no money unless someone sends it from the
// dashboard, so do not send pending payout requests there by hand.
//
// In the keyless form there is no payout wallet: SendRefund fails with an
// error matching cryptapi.ErrAPIKeyRequired; send the refund from your
// own wallet and record it with MarkRefundSent. A refund that has no
// address yet, or is cancelled, is ErrWrongStatus.
func (d *Desk) SendRefund(ctx context.Context, refundID string) (*Refund, error) {
	if !d.c.HasAPIKey() {
		return nil, fmt.Errorf("invoice: SendRefund sends from the payout wallet, which the keyless form has not (%w): "+
			"send the refund from your own wallet and record it with MarkRefundSent", cryptapi.ErrAPIKeyRequired)
	}
	invID, err := parseRefundID(refundID)
	if err != nil {
		return nil, err
	}
	if _, err := d.loadRefund(ctx, invID, refundID); err != nil {
		return nil, err
	}
	owner := rand.Text()
	_, changed, err := d.apply(ctx, invID, "", event{kind: evRefundSend,
		refund: &refundEvent{id: refundID, owner: owner, until: d.now().Add(d.lease)}})
	if err != nil {
		return nil, err
	}
	if !changed {
		// Sent, or being sent by another call: as it stands.
		return d.refundAsStored(ctx, invID, refundID, nil)
	}
	if err := d.notify(ctx, invID); err != nil {
		d.logError(ctx, "invoice change not passed on (Tick offers it again)", invID, err)
	}
	serr := d.send(ctx, invID, refundID, owner)
	return d.refundAsStored(ctx, invID, refundID, serr)
}

// refundAsStored passes the invoice's changes on and returns the refund
// as stored, with err.
func (d *Desk) refundAsStored(ctx context.Context, invID, refundID string, err error) (*Refund, error) {
	if nerr := d.notify(ctx, invID); nerr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrNotNotified, nerr)
	}
	r, lerr := d.store.Load(ctx, invID)
	if lerr != nil {
		return nil, errors.Join(err, lerr)
	}
	rf := r.refundIn(refundID)
	if rf == nil {
		return nil, ErrRefundNotFound
	}
	c := *rf
	return &c, err
}

// sender carries one refund's send on while it holds the claim.
type sender struct {
	d                  *Desk
	invID, id, owner   string
	ticker, address    string
	amount             decimal.Decimal
	work               refundWork
	others             map[string]bool // the payout requests other refunds of the invoice use now (older ones are caught as ErrDuplicate when recorded)
	callTimeout, lease time.Duration
}

// send carries the send of refund id on, as owner, until the payout is
// queued and not yet done (then it releases the claim for Tick), or the
// refund is sent or failed, or a call fails. It makes each money call at
// most once, recording it in the store first.
func (d *Desk) send(ctx context.Context, invID, id, owner string) error {
	s := &sender{d: d, invID: invID, id: id, owner: owner, lease: d.lease, callTimeout: d.lease / 2}
	for range 12 {
		r, err := d.store.Load(ctx, invID)
		if err != nil {
			return err
		}
		rf, w := r.refundIn(id), r.workOf(id)
		if rf == nil || w == nil || rf.Status != RefundSending || w.Owner != owner {
			return nil // done, or taken over
		}
		s.ticker, s.address, s.amount, s.work = rf.Ticker, rf.Address, rf.Amount, *w
		s.others = map[string]bool{}
		for _, o := range r.refunds {
			if o.ID != id && o.RequestID != "" {
				s.others[o.RequestID] = true
			}
		}
		more, err := s.step(ctx)
		if err != nil || !more {
			return err
		}
	}
	return s.release(ctx, d.now().Add(RefundCheckEvery), nil)
}

// step makes the next call of the send; more tells whether another step
// follows at once.
func (s *sender) step(ctx context.Context) (more bool, err error) {
	w := &s.work
	now := s.d.now()
	switch {
	case w.PayoutID != "":
		var refused error
		if w.Step != stepProcessed {
			// A payout pays once, so it may be queued again after an
			// unknown outcome: the service refuses one already queued.
			if err := s.record(ctx, func(p *refundWork) { p.Step, p.AskedAt = stepProcess, now }); err != nil {
				return false, err
			}
			err := s.call(ctx, func(ctx context.Context) error { return s.d.c.ProcessPayout(ctx, w.PayoutID) })
			switch {
			case err == nil:
				return true, s.record(ctx, func(p *refundWork) { p.Step = stepProcessed })
			case !definite(err):
				return false, s.release(ctx, now.Add(RefundCheckEvery), err)
			}
			refused = err // queued already? The status tells.
		}
		var info *cryptapi.PayoutInfo
		err := s.call(ctx, func(ctx context.Context) (err error) { info, err = s.d.c.PayoutStatus(ctx, w.PayoutID); return err })
		if err != nil {
			return false, s.release(ctx, now.Add(RefundCheckEvery), err)
		}
		switch info.Status {
		case cryptapi.PayoutDone:
			return false, s.done(ctx, true, info.TxID, "", false)
		case cryptapi.PayoutError:
			return false, s.done(ctx, false, "", payoutFailure(info), false)
		case cryptapi.PayoutCreated:
			if refused != nil {
				// Not queued, and the service refuses to queue it: failed,
				// keeping the payout for the next send (never a second one
				// while it may still be queued).
				return false, s.done(ctx, false, "", serviceMessage(refused), true)
			}
			return true, s.record(ctx, func(p *refundWork) { p.Step = "" }) // not queued: queue it
		}
		return false, s.release(ctx, now.Add(RefundCheckEvery), nil)

	case w.RequestID != "":
		if w.Step == stepPayout {
			// A payout was asked for before, with an unknown outcome: the
			// request says whether it is in one.
			req, err := s.findRequest(ctx, w.RequestID)
			if err != nil {
				return false, s.release(ctx, now.Add(RefundCheckEvery), err)
			}
			switch {
			case req == nil:
				return false, s.release(ctx, now.Add(RefundCheckEvery), fmt.Errorf("invoice: refund %s: payout request %s is not listed yet", s.id, w.RequestID))
			case req.PayoutID != "":
				return true, s.record(ctx, func(p *refundWork) { p.PayoutID, p.Step = req.PayoutID, "" })
			case req.Status == "rejected":
				return false, s.done(ctx, false, "", "the service rejected payout request "+req.ID, false)
			}
			// Still pending and in no payout: ask again.
		}
		if err := s.record(ctx, func(p *refundWork) { p.Step, p.AskedAt = stepPayout, now }); err != nil {
			return false, err
		}
		var info *cryptapi.PayoutInfo
		err := s.call(ctx, func(ctx context.Context) (err error) {
			info, err = s.d.c.CreatePayoutFromRequests(ctx, []string{w.RequestID})
			return err
		})
		switch {
		case err == nil:
			return true, s.record(ctx, func(p *refundWork) { p.PayoutID, p.Step = info.ID, "" })
		case !definite(err):
			return false, s.release(ctx, now.Add(RefundCheckEvery), err)
		}
		// Refused: the request is not ours to pay any more (in another
		// payout, rejected), or the service refuses it; the refund failed,
		// and keeps a request that is still pending for the next send.
		req, lerr := s.findRequest(ctx, w.RequestID)
		keep := lerr == nil && req != nil && req.PayoutID == "" && req.Status == "pending"
		return false, s.done(ctx, false, "", serviceMessage(err), keep)

	default:
		if w.Step == stepRequest {
			// A payout request was asked for before, with an unknown
			// outcome. Once that call is surely over, a pending request for
			// this address and amount that no other refund uses is the
			// one; if there is none, it never reached the service.
			if wait := w.AskedAt.Add(s.lease); now.Before(wait) {
				return false, s.release(ctx, wait, nil)
			}
			adopted, err := s.adoptRequest(ctx)
			if err != nil {
				return false, s.release(ctx, now.Add(RefundCheckEvery), err)
			}
			if adopted {
				return true, nil
			}
		}
		if err := s.record(ctx, func(p *refundWork) { p.Step, p.AskedAt = stepRequest, now }); err != nil {
			return false, err
		}
		var reqs *cryptapi.PayoutRequests
		err := s.call(ctx, func(ctx context.Context) (err error) {
			reqs, err = s.d.c.CreatePayouts(ctx, s.ticker, map[string]decimal.Decimal{s.address: s.amount})
			return err
		})
		switch {
		case err == nil && len(reqs.RequestIDs) == 1:
			err := s.record(ctx, func(p *refundWork) { p.useRequest(s.ticker, reqs.RequestIDs[0]); p.Step = "" })
			if errors.Is(err, ErrDuplicate) {
				// Another refund, recovering from an unknown outcome of its
				// own, took this request first (same address and amount):
				// it is paid once, by that refund. This one asks again later.
				return false, s.release(ctx, now.Add(s.lease), err)
			}
			return true, err
		case err == nil:
			// Success without the request's ID: it may exist; find it.
			return false, s.release(ctx, now.Add(s.lease), fmt.Errorf("invoice: refund %s: the service gave %d payout request IDs for one request", s.id, len(reqs.RequestIDs)))
		case !definite(err):
			return false, s.release(ctx, now.Add(s.lease), err)
		}
		return false, s.done(ctx, false, "", serviceMessage(err), false)
	}
}

// call makes one call of the service within half the Desk's lease, so
// that it is over before the claim lapses.
func (s *sender) call(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	return fn(ctx)
}

// detached returns a context for a store write that must land even when
// ctx ended (the caller gave up in the middle of a send): what the send
// did is recorded all the same.
func (s *sender) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.callTimeout)
}

// record stores the send's progress, renewing the claim; it fails with
// errLostClaim when the send was taken over.
func (s *sender) record(ctx context.Context, edit func(*refundWork)) error {
	ctx, cancel := s.detached(ctx)
	defer cancel()
	p := s.work
	edit(&p)
	_, _, err := s.d.apply(ctx, s.invID, "", event{kind: evRefundWork,
		refund: &refundEvent{id: s.id, owner: s.owner, until: s.d.now().Add(s.lease), work: &p}})
	if err != nil {
		return err
	}
	s.work = p
	return nil
}

// release gives the claim up, for Tick to look again at checkAt, and
// returns err.
func (s *sender) release(ctx context.Context, checkAt time.Time, err error) error {
	ctx, cancel := s.detached(ctx)
	defer cancel()
	p := s.work
	p.CheckAt = checkAt
	_, _, rerr := s.d.apply(ctx, s.invID, "", event{kind: evRefundWork,
		refund: &refundEvent{id: s.id, owner: s.owner, until: s.d.now(), work: &p, release: true}})
	if err != nil {
		return fmt.Errorf("invoice: refund %s: %w", s.id, err)
	}
	if rerr != nil && !errors.Is(rerr, errLostClaim) {
		// The claim lapses with the lease; Tick takes it over then.
		return rerr
	}
	return nil
}

// done records the payout's end: sent with txid, or failed.
func (s *sender) done(ctx context.Context, sent bool, txid, failure string, keepRequest bool) error {
	ctx, cancel := s.detached(ctx)
	defer cancel()
	_, _, err := s.d.apply(ctx, s.invID, "", event{kind: evRefundDone, refund: &refundEvent{id: s.id, owner: s.owner,
		sent: sent, txid: txid, failure: failure, payoutID: s.work.PayoutID, keepRequest: keepRequest}})
	if errors.Is(err, errLostClaim) {
		return nil
	}
	return err
}

// findRequest returns the payout request with this ID, nil if the
// service does not list it.
func (s *sender) findRequest(ctx context.Context, id string) (*cryptapi.PayoutRequest, error) {
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	for req, err := range s.d.c.ListPayoutRequests(ctx, s.ticker, &cryptapi.ListPayoutsOptions{Status: "all"}) {
		if err != nil {
			return nil, err
		}
		if req.ID == id {
			return &req, nil
		}
	}
	return nil, nil
}

// adoptRequest makes the send's payout request the oldest pending one, in
// no payout, for the refund's address and amount that no refund uses
// (recording one another refund used is ErrDuplicate: the store refuses
// another invoice's, one of the record's Keys, and the record another of
// its refunds'), and reports whether it found one.
func (s *sender) adoptRequest(ctx context.Context) (bool, error) {
	lctx, cancel := context.WithTimeout(ctx, s.callTimeout)
	defer cancel()
	var found []string
	for req, err := range s.d.c.ListPayoutRequests(lctx, s.ticker, &cryptapi.ListPayoutsOptions{Status: "pending"}) {
		if err != nil {
			return false, err
		}
		if req.PayoutID == "" && req.Value.Equal(s.amount) && strings.EqualFold(req.Address, s.address) && !s.others[req.ID] {
			found = append(found, req.ID)
		}
	}
	for i := len(found) - 1; i >= 0; i-- { // listed newest first: the oldest first
		id := found[i]
		err := s.record(ctx, func(p *refundWork) { p.useRequest(s.ticker, id); p.Step = "" })
		if errors.Is(err, ErrDuplicate) {
			continue // another refund's
		}
		return err == nil, err
	}
	return false, nil
}

// definite reports whether a call's failure says for sure what the
// service did: it answered with an error (an *APIError that is not an
// outcome-unknown one), or the call was refused before the network.
func definite(err error) bool {
	var ae *cryptapi.APIError
	if errors.As(err, &ae) {
		return !errors.Is(err, cryptapi.ErrOutcomeUnknown) && !ae.Temporary()
	}
	return errors.Is(err, cryptapi.ErrInvalidOption) || errors.Is(err, cryptapi.ErrInvalidValue) ||
		errors.Is(err, cryptapi.ErrInvalidAddress) || errors.Is(err, cryptapi.ErrAPIKeyRequired)
}

// serviceMessage is the service's reason in a refusal, or the error.
func serviceMessage(err error) string {
	var ae *cryptapi.APIError
	if errors.As(err, &ae) && ae.Message != "" {
		return "the service refused the payout: " + ae.Message
	}
	return err.Error()
}

// payoutFailure is the service's reason for a failed payout.
func payoutFailure(info *cryptapi.PayoutInfo) string {
	if e := strings.TrimSpace(info.Error); e != "" && !strings.EqualFold(e, "none") {
		return fmt.Sprintf("payout %s failed: %s", info.ID, e)
	}
	return fmt.Sprintf("payout %s failed", info.ID)
}

// followRefunds carries on, from Tick, the sends of the invoice's
// refunds whose time has come: the claim of their sender lapsed or was
// given up, and their check is due. followed tells whether it carried
// one on.
func (d *Desk) followRefunds(ctx context.Context, r *Record) (followed bool, err error) {
	if !d.c.HasAPIKey() {
		return false, nil
	}
	now := d.now()
	var errs []error
	for _, rf := range r.Invoice.Refunds {
		w := r.workOf(rf.ID)
		if rf.Status != RefundSending || w == nil || now.Before(w.CheckAt) || (w.Owner != "" && now.Before(w.Until)) {
			continue
		}
		owner := rand.Text()
		_, _, err := d.apply(ctx, r.ID(), "", event{kind: evRefundResume,
			refund: &refundEvent{id: rf.ID, owner: owner, until: now.Add(d.lease)}})
		switch {
		case errors.Is(err, errClaimHeld), errors.Is(err, errLostClaim):
			continue // another replica took it
		case err != nil:
			errs = append(errs, err)
			continue
		}
		followed = true
		if err := d.send(ctx, r.ID(), rf.ID, owner); err != nil {
			errs = append(errs, err)
		}
	}
	return followed, errors.Join(errs...)
}
