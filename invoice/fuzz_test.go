package invoice

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// allowed lists the statuses each status may move to; staying is always
// allowed.
var allowed = map[Status][]Status{
	// Marked settled by hand, paid, expired or cancelled.
	StatusNew: {StatusProcessing, StatusSettled, StatusExpired, StatusInvalid},
	// A confirmation for less than was seen makes a processing invoice
	// new again (or expired, past its deadline); unconfirmed past the
	// monitoring window it expires.
	StatusProcessing: {StatusSettled, StatusNew, StatusExpired},
	// Reopened (new, or at once processing or settled by what arrived
	// meanwhile), marked settled, cancelled.
	StatusExpired: {StatusNew, StatusProcessing, StatusSettled, StatusInvalid},
	StatusSettled: nil,
	StatusInvalid: nil,
}

func moveAllowed(from, to Status) bool {
	if from == to {
		return true
	}
	for _, s := range allowed[from] {
		if s == to {
			return true
		}
	}
	return false
}

// eventsFrom decodes fuzz bytes into events, 4 bytes each: kind, uuid,
// amount, time step.
func eventsFrom(data []byte) []event {
	var evs []event
	at := t0
	coins := []string{"btc", "btc", "btc", "ltc"}
	for i := 0; i+4 <= len(data) && len(evs) < 64; i += 4 {
		k, u, a, s := data[i], data[i+1], data[i+2], data[i+3]
		at = at.Add(time.Duration(s) * 30 * time.Second)
		if s == 255 {
			at = at.Add(24 * time.Hour) // past the monitoring window
		}
		switch k % 9 {
		case 0, 1:
			amount := decimal.New(int64(a)+1, -6) // 0.000001 .. 0.000256
			if a > 200 {
				amount = decimal.New(int64(a), -8)
			}
			evs = append(evs, event{kind: evPayment, at: at, uuid: fmt.Sprintf("u%d", u%8), coin: coins[u%4],
				amount: amount, confirmed: k%7 == 1, txid: "t"})
		case 2:
			evs = append(evs, event{kind: evQuote, at: at, rate: decimal.NewFromInt(40000 + int64(a)*100)})
		case 3:
			evs = append(evs, event{kind: evClock, at: at})
		case 4:
			if a == 0 {
				evs = append(evs, event{kind: evInvalidate, at: at})
			} else {
				evs = append(evs, event{kind: evClock, at: at})
			}
		case 5:
			evs = append(evs, event{kind: evMark, at: at, note: "accepted"})
		case 6:
			evs = append(evs, event{kind: evReopen, at: at, rate: decimal.NewFromInt(40000 + int64(a)*100),
				expiresIn: time.Duration(u%4+1) * 15 * time.Minute, note: "more time"})
		case 7:
			re := &refundEvent{of: []RefundOf{RefundAll, RefundOverpaid, RefundCustom}[u%3], rate: RateThen,
				ticker: coins[u%4], decimals: 8, token: fmt.Sprintf("T%d", i), claimFor: time.Duration(a%4+1) * time.Hour}
			if re.of == RefundCustom {
				re.rate, re.amount = "", decimal.New(int64(a)+1, -6)
			}
			if u&0x80 != 0 && re.of != RefundCustom {
				re.rate, re.price = RateNow, decimal.NewFromInt(30000+int64(a)*300)
			}
			evs = append(evs, event{kind: evRefund, at: at, refund: re})
		case 8:
			id := fmt.Sprintf("INV-R%d", u%3+1)
			re := &refundEvent{id: id, owner: "A", until: at.Add(time.Minute)}
			kind := []eventKind{evRefundAddress, evRefundSend, evRefundDone, evRefundDone, evRefundMarkSent, evRefundCancel}[a%6]
			switch a % 6 {
			case 0:
				re.address = "bc1q56mj3gna7kq0057de42ww2rjxwzeh9amkncq5e"
				if u&0x80 != 0 {
					re.address = "TJFQKdYoByYy4s5fGnLZMQKwxHZfmCnKU7" // another network's
				}
			case 2:
				re.sent, re.txid = true, "T"
			case 4:
				re.txid = "M"
			}
			evs = append(evs, event{kind: kind, at: at, refund: re})
		}
	}
	return evs
}

func FuzzTransition(f *testing.F) {
	f.Add([]byte{0, 1, 100, 1, 1, 1, 100, 1})
	f.Add([]byte{0, 1, 250, 1, 2, 0, 50, 40, 1, 1, 250, 1, 0, 2, 9, 1, 1, 2, 9, 1})
	f.Add([]byte{3, 0, 0, 130, 0, 3, 100, 1, 1, 3, 100, 1})
	f.Add([]byte{4, 0, 0, 1, 0, 1, 250, 1})
	f.Add([]byte{1, 1, 255, 1, 1, 2, 255, 1, 1, 3, 255, 1, 0, 4, 1, 1})
	f.Add([]byte{0, 1, 255, 1, 3, 0, 0, 255, 1, 1, 255, 1})                       // processing, dropped, confirmed late
	f.Add([]byte{1, 1, 100, 1, 3, 0, 0, 130, 6, 1, 7, 1, 1, 2, 255, 1})           // expired partly paid, reopened, paid
	f.Add([]byte{0, 1, 100, 1, 4, 0, 0, 1, 1, 1, 100, 1, 5, 0, 0, 1, 0, 3, 1, 1}) // invalidated, confirmed, marked
	f.Add([]byte{1, 1, 255, 1, 7, 1, 0, 1, 8, 0, 0, 1, 8, 0, 1, 1, 8, 0, 2, 1})   // overpaid, refunded, claimed, sent
	f.Add([]byte{1, 1, 255, 1, 7, 0, 0, 1, 7, 2, 9, 1, 8, 1, 5, 1, 7, 2, 9, 1})   // all, custom refused, cancelled, custom
	f.Fuzz(func(t *testing.T, data []byte) {
		tol := "0"
		if len(data) > 0 && data[0]&0x80 != 0 {
			tol = "0.01"
		}
		r := btcRecord(t, "25", "USD", "60000")
		r.Invoice.Tolerance = dec(tol)
		settle(r)
		for _, e := range eventsFrom(data) {
			next, changed, err := transition(r, e)
			if err != nil {
				if errors.Is(err, ErrWrongStatus) && (e.kind == evInvalidate || e.kind == evMark || e.kind == evReopen) {
					continue
				}
				if e.refund != nil && (errors.Is(err, ErrWrongStatus) || errors.Is(err, ErrNotRefundable) ||
					errors.Is(err, ErrRefundNotFound) || errors.Is(err, errLostClaim) || errors.Is(err, ErrInvalidOptions)) {
					continue
				}
				t.Fatalf("%+v: %v", e, err)
			}
			checkInvariants(t, r, next, changed, e)
			// Applying the same payment again changes nothing.
			if e.kind == evPayment {
				again, changed2, err := transition(next, e)
				if err != nil || changed2 && again.Invoice.Status == next.Invoice.Status && len(again.Invoice.Payments) != len(next.Invoice.Payments) {
					t.Fatalf("replaying %+v: changed %v, err %v", e, changed2, err)
				}
				if len(again.Invoice.Payments) != len(next.Invoice.Payments) || !again.Invoice.Paid.Equal(next.Invoice.Paid) ||
					!again.Invoice.PaidPending.Equal(next.Invoice.PaidPending) {
					t.Fatalf("replaying %+v changed the payments", e)
				}
			}
			// The clock alone, seen through AsOf, is what a tick stores.
			view := next.Invoice.AsOf(e.at.Add(time.Hour))
			ticked, _, err := transition(next, event{kind: evClock, at: e.at.Add(time.Hour)})
			if err != nil || view.Status != ticked.Invoice.Status || view.Exception != ticked.Invoice.Exception ||
				!view.Due.Equal(ticked.Invoice.Due) || view.PaymentURI != ticked.Invoice.PaymentURI {
				t.Fatalf("AsOf %s %s due %s, a tick stores %s %s due %s (%v)", view.Status, view.Exception, view.Due,
					ticked.Invoice.Status, ticked.Invoice.Exception, ticked.Invoice.Due, err)
			}
			r = next
		}
	})
}

func checkInvariants(t *testing.T, prevRec, nextRec *Record, changed bool, e event) {
	t.Helper()
	prev, inv := &prevRec.Invoice, &nextRec.Invoice
	if inv.Paid.LessThan(prev.Paid) {
		t.Fatalf("Paid decreased: %s -> %s", prev.Paid, inv.Paid)
	}
	if !moveAllowed(prev.Status, inv.Status) {
		t.Fatalf("status moved %s -> %s", prev.Status, inv.Status)
	}
	if inv.Due.IsNegative() || inv.Remaining.IsNegative() || inv.Excess.IsNegative() {
		t.Fatalf("negative amount: due %s remaining %s excess %s", inv.Due, inv.Remaining, inv.Excess)
	}
	if inv.Due.IsPositive() != (inv.Status == StatusNew) {
		t.Fatalf("due %s with status %s", inv.Due, inv.Status)
	}
	if inv.Due.IsPositive() && inv.Due.LessThan(inv.Minimum) {
		t.Fatalf("due %s below the minimum %s", inv.Due, inv.Minimum)
	}
	if !inv.Due.Equal(inv.Due.Truncate(inv.Decimals)) {
		t.Fatalf("due %s finer than the coin's precision", inv.Due)
	}
	seen := map[string]bool{}
	paid, pending := decimal.Zero, decimal.Zero
	received := false
	for _, rc := range inv.Payments {
		if seen[rc.UUID] {
			t.Fatalf("two receipts for uuid %s", rc.UUID)
		}
		seen[rc.UUID] = true
		if rc.WrongCoin {
			if !rc.FiatValue.IsZero() {
				t.Fatalf("wrong-coin payment valued at %s", rc.FiatValue)
			}
			received = true
			continue
		}
		if rc.Confirmed {
			paid = paid.Add(rc.Amount)
			received = true
		} else {
			pending = pending.Add(rc.Amount)
		}
	}
	if !paid.Equal(inv.Paid) || !pending.Equal(inv.PaidPending) {
		t.Fatalf("totals %s/%s, receipts say %s/%s", inv.Paid, inv.PaidPending, paid, pending)
	}
	if (inv.Status == StatusExpired || inv.Status == StatusInvalid) && received && inv.Exception == ExceptionNone {
		t.Fatalf("money received on a %s invoice, no exception", inv.Status)
	}
	if len(inv.Payments) < len(prev.Payments) {
		t.Fatal("a receipt was dropped")
	}
	// Never more refunded than was received and confirmed, in each coin;
	// a refund only while the invoice is final.
	for _, coin := range []string{"btc", "ltc"} {
		got, _ := inv.received(coin)
		if out := inv.refunded(coin, ""); out.GreaterThan(got) {
			t.Fatalf("%s %s refunded of %s received", out, coin, got)
		}
	}
	if len(inv.Refunds) > len(prev.Refunds) && !inv.Status.Final() {
		t.Fatalf("a refund of a %s invoice", inv.Status)
	}
	for _, rf := range inv.Refunds {
		if !rf.Amount.IsPositive() || !rf.Amount.Equal(rf.Amount.Truncate(8)) {
			t.Fatalf("refund of %s", rf.Amount)
		}
	}
	for i := range prev.Payments {
		if inv.Payments[i].UUID != prev.Payments[i].UUID || (prev.Payments[i].Confirmed && !inv.Payments[i].Confirmed) {
			t.Fatalf("receipt %d rewritten", i)
		}
		if !inv.Payments[i].Rate.Equal(prev.Payments[i].Rate) {
			t.Fatalf("receipt %d changed its quote", i)
		}
	}
	if changed != (inv.Version == prev.Version+1) || (!changed && inv.Version != prev.Version) {
		t.Fatalf("changed %v, version %d -> %d", changed, prev.Version, inv.Version)
	}
	// Events are only appended, but for a re-quote that follows a
	// re-quote, which replaces it.
	kept := len(prev.Events)
	if e.kind == evQuote && changed && kept > 0 && prev.Events[kept-1].Kind == EventRequoted {
		kept--
	}
	if changed != (len(inv.Events) > kept) {
		t.Fatalf("changed %v, events %d -> %d", changed, len(prev.Events), len(inv.Events))
	}
	for i := range kept {
		if inv.Events[i] != prev.Events[i] {
			t.Fatalf("event %d rewritten", i)
		}
	}
	if inv.Exception != ExceptionMarked && e.kind != evReopen &&
		((prev.Exception == ExceptionWrongCoin && inv.Exception != ExceptionWrongCoin) ||
			(prev.Exception == ExceptionPaidLate && inv.Exception != ExceptionPaidLate && inv.Exception != ExceptionWrongCoin)) {
		t.Fatalf("exception %s cleared to %s", prev.Exception, inv.Exception)
	}
	if prev.Exception == ExceptionMarked && inv.Exception != ExceptionMarked {
		t.Fatalf("marked cleared to %s", inv.Exception)
	}
	waiting := false // a refund whose link or payout Tick follows
	for _, rf := range inv.Refunds {
		waiting = waiting || rf.Status == RefundAwaitingAddress || rf.Status == RefundSending
	}
	if tick := nextRec.TickAt(); (inv.Status == StatusNew || inv.Status == StatusProcessing || waiting) == tick.IsZero() {
		t.Fatalf("status %s with tick time %v", inv.Status, tick)
	}
}

// FuzzURITemplate: whatever URI the service answers, the template gives
// that URI back for the amount it was made for, never panics, and a
// recognised form puts exactly the new amount where the old one was.
func FuzzURITemplate(f *testing.F) {
	f.Add("bitcoin:bc1q?amount=0.5", "0.5", int32(8), "0.25")
	f.Add("ethereum:0xabc?value=500000000000000000&x=1", "0.5", int32(18), "0.1")
	f.Add("tron:T?label=a&amount=0.50", "0.5", int32(6), "1")
	f.Add("bitcoin:bc1q", "0.5", int32(8), "0.25")
	f.Add("x:y?amount=1e3&a==&&=5", "5", int32(0), "7")
	f.Fuzz(func(t *testing.T, uri, amount string, decimals int32, next string) {
		a, err := decimal.NewFromString(amount)
		if err != nil || !a.IsPositive() || decimals < 0 || decimals > 30 || len(amount) > 40 {
			return
		}
		n, err := decimal.NewFromString(next)
		if err != nil || !n.IsPositive() || len(next) > 40 {
			return
		}
		tm := makeURITemplate(uri, a, decimals)
		if got := tm.render(a); got != uri {
			t.Fatalf("render(given) = %q, want %q", got, uri)
		}
		out := tm.render(n)
		if !tm.Known {
			if !n.Equal(a) && out != "" {
				t.Fatalf("unknown form rendered %q", out)
			}
			return
		}
		if n.Equal(a) {
			return
		}
		want := n.Shift(tm.Smallest).String()
		if out != tm.Prefix+want+tm.Suffix || len(tm.Prefix)+len(tm.Suffix) >= len(uri) {
			t.Fatalf("render(%s) = %q from %q", n, out, uri)
		}
		if !strings.HasPrefix(uri, tm.Prefix) || !strings.HasSuffix(uri, tm.Suffix) {
			t.Fatalf("template %+v is not cut from %q", tm, uri)
		}
	})
}
