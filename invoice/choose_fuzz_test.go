package invoice

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
)

// choiceEventsFrom decodes fuzz bytes into events of an invoice offering
// btc and ltc (choiceRecord), 4 bytes each: kind, which, amount, time
// step. Choices make a coin's address the first time; payments go to
// either coin's address (made or not), now and then in another coin.
func choiceEventsFrom(r *Record, data []byte) []event {
	var evs []event
	at := t0
	coins := []string{"btc", "ltc"}
	addrs := map[string]string{"btc": "bc1qaddr", "ltc": "ltc1qaddr"}
	made := map[string]bool{}
	rates := func(a byte) (string, string) {
		return fmt.Sprint(40000 + int(a)*100), fmt.Sprint(60 + int(a)%40)
	}
	for i := 0; i+4 <= len(data) && len(evs) < 64; i += 4 {
		k, u, a, s := data[i], data[i+1], data[i+2], data[i+3]
		at = at.Add(time.Duration(s) * 30 * time.Second)
		coin := coins[u%2]
		switch k % 8 {
		case 0:
			btc, ltc := rates(a)
			evs = append(evs, choose(coin, at, made[coin], btc, ltc))
			made[coin] = true
		case 1, 2:
			amount := decimal.New(int64(a)+1, -6)
			if coin == "ltc" {
				amount = decimal.New(int64(a)+1, -3)
			}
			paid := coin
			if u&0x40 != 0 {
				paid = "doge" // another coin than the address's
			}
			evs = append(evs, event{kind: evPayment, at: at, uuid: fmt.Sprintf("u%d", u%6), coin: paid, amount: amount,
				confirmed: k%2 == 0, txid: "t", address: addrs[coin]})
		case 3:
			btc, ltc := rates(a)
			evs = append(evs, event{kind: evQuote, at: at, rates: map[string]decimal.Decimal{"btc": dec(btc), "ltc": dec(ltc)}})
		case 4:
			if a == 0 {
				evs = append(evs, event{kind: evInvalidate, at: at})
			} else {
				evs = append(evs, event{kind: evClock, at: at.Add(time.Duration(a) * time.Minute)})
			}
		case 5:
			re := &refundEvent{of: []RefundOf{RefundAll, RefundOverpaid, RefundCustom}[u%3], rate: RateThen,
				ticker: []string{"btc", "ltc", "doge"}[int(u/3)%3], decimals: 8, token: fmt.Sprintf("T%d", i), claimFor: time.Hour}
			if re.of == RefundCustom {
				re.rate, re.amount = "", decimal.New(int64(a)+1, -5)
			}
			if u&0x80 != 0 && re.of != RefundCustom {
				re.rate, re.price = RateNow, decimal.NewFromInt(30+int64(a)*300)
			}
			evs = append(evs, event{kind: evRefund, at: at, refund: re})
		case 6:
			re := &refundEvent{id: fmt.Sprintf("INV-R%d", u%3+1), txid: "M"}
			kind := evRefundCancel
			if a%2 == 0 {
				kind = evRefundMarkSent
			}
			evs = append(evs, event{kind: kind, at: at, refund: re})
		case 7:
			evs = append(evs, event{kind: evMark, at: at, note: "accepted"})
		}
	}
	_ = r
	return evs
}

// FuzzChoiceTransition drives an invoice whose coin the customer chooses
// through choices, switches, payments to every address, re-quotes,
// expiry, refunds: whatever the order, each coin keeps one address, a
// receipt keeps its coin's quote, the totals are the receipts', and no
// coin is ever refunded beyond what arrived in it.
func FuzzChoiceTransition(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 0, 100, 1, 0, 1, 0, 1, 2, 1, 200, 1})                         // btc, pay, ltc, pay
	f.Add([]byte{0, 1, 0, 1, 2, 1, 255, 1, 0, 0, 0, 1, 2, 0, 255, 1, 5, 0, 0, 1, 5, 4, 0, 1}) // settled in two coins, refunds
	f.Add([]byte{0, 0, 0, 1, 2, 64, 20, 1, 4, 0, 0, 255, 4, 0, 200, 1, 5, 6, 0, 1})           // wrong coin, expired, refunded
	f.Fuzz(func(t *testing.T, data []byte) {
		r := choiceRecord(t)
		for _, e := range choiceEventsFrom(r, data) {
			next, changed, err := transition(r, e)
			if err != nil {
				if errors.Is(err, ErrWrongStatus) || errors.Is(err, ErrTooManyChoices) || errors.Is(err, ErrNotRefundable) ||
					errors.Is(err, ErrRefundNotFound) || errors.Is(err, ErrInvalidOptions) || errors.Is(err, errBadEvent) {
					continue
				}
				t.Fatalf("%+v: %v", e, err)
			}
			checkChoiceInvariants(t, r, next, changed)
			r = next
		}
	})
}

func checkChoiceInvariants(t *testing.T, prevRec, nextRec *Record, changed bool) {
	t.Helper()
	prev, inv := &prevRec.Invoice, &nextRec.Invoice
	if !moveAllowed(prev.Status, inv.Status) {
		t.Fatalf("status moved %s -> %s", prev.Status, inv.Status)
	}
	if changed != (inv.Version == prev.Version+1) || (!changed && inv.Version != prev.Version) {
		t.Fatalf("changed %v, version %d -> %d", changed, prev.Version, inv.Version)
	}
	if inv.Due.IsPositive() != (inv.Status == StatusNew && inv.Ticker != "") {
		t.Fatalf("due %s with status %s in %q", inv.Due, inv.Status, inv.Ticker)
	}
	addrs := map[string]string{}
	for i, c := range inv.Coins {
		if p := prev.Coins[i]; p.AddressIn != "" && p.AddressIn != c.AddressIn {
			t.Fatalf("%s address %s -> %s", c.Ticker, p.AddressIn, c.AddressIn)
		}
		if c.AddressIn != "" {
			if other, twice := addrs[c.AddressIn]; twice {
				t.Fatalf("%s and %s share %s", other, c.Ticker, c.AddressIn)
			}
			addrs[c.AddressIn] = c.Ticker
		}
	}
	if inv.Ticker != "" && addrs[inv.AddressIn] != inv.Ticker {
		t.Fatalf("the invoice's address %q is not its coin's (%s)", inv.AddressIn, inv.Ticker)
	}
	paid, paidFiat, pendingFiat := decimal.Zero, decimal.Zero, decimal.Zero
	for i, rc := range inv.Payments {
		if i < len(prev.Payments) && !rc.Rate.Equal(prev.Payments[i].Rate) {
			t.Fatalf("receipt %d changed its quote", i)
		}
		if rc.WrongCoin {
			continue
		}
		if c := coinOf(inv, rc.Coin); c == nil || c.AddressIn == "" {
			t.Fatalf("a valued payment in %s, a coin never chosen", rc.Coin)
		}
		if rc.Confirmed {
			paidFiat = paidFiat.Add(rc.FiatValue)
			if callbackurl.EqualFoldASCII(rc.Coin, inv.Ticker) {
				paid = paid.Add(rc.Amount)
			}
		} else {
			pendingFiat = pendingFiat.Add(rc.FiatValue)
		}
	}
	if !paid.Equal(inv.Paid) || !paidFiat.Equal(inv.PaidFiat) || !pendingFiat.Equal(inv.PaidPendingFiat) {
		t.Fatalf("totals %s/%s/%s, receipts say %s/%s/%s", inv.Paid, inv.PaidFiat, inv.PaidPendingFiat, paid, paidFiat, pendingFiat)
	}
	// What arrived in each coin, counted here from the receipts.
	arrived := map[string]decimal.Decimal{}
	for _, rc := range inv.Payments {
		if rc.Confirmed {
			arrived[rc.Coin] = arrived[rc.Coin].Add(rc.Amount)
		}
	}
	for _, coin := range []string{"btc", "ltc", "doge"} {
		if out := inv.refunded(coin, ""); out.GreaterThan(arrived[coin]) {
			t.Fatalf("%s %s refunded of %s received", out, coin, arrived[coin])
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
	if choices(inv) > MaxChoices {
		t.Fatalf("%d choices", choices(inv))
	}
}
