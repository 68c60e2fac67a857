package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// The admin refunds an invoice as BTCPay Server does: the staff decide
// the amount (the overpaid part, all of it, or an amount), the shop makes
// a claim link for the customer, the customer enters an address on the
// claim page, and the staff send it from the payout wallet (SendRefund,
// the API-key form) or from their own wallet (Mark as sent, with the
// transaction ID). A refund not sent yet can be cancelled.

// Refund actions of the admin's invoice page, posted to
// /admin/invoices/<ID>/<action> like the other decisions.
const (
	refundNew    = "refund"        // Desk.Refund
	refundSend   = "refund-send"   // Desk.SendRefund
	refundMark   = "refund-sent"   // Desk.MarkRefundSent
	refundCancel = "refund-cancel" // Desk.CancelRefund
)

// refundDone says what a refund action did, after the redirect.
var refundDone = map[string]string{
	refundNew:      "The refund is made. Give the customer its claim link: they enter the address it goes to.",
	refundSend:     "The refund is sent.",
	"sending":      "The payout is on its way. The refund shows as sent, with its transaction, once the service reports it (the shop checks every 30 seconds).",
	"send-unknown": "The payout was asked for, but the service's answer did not arrive. The refund stays \"Sending\" and the shop finds out what happened by itself: do not send it again from your wallet.",
	refundMark:     "The refund is recorded as sent.",
	refundCancel:   "The refund is cancelled. Its claim link no longer opens.",
}

// refundProblem says what went wrong with a refund action, after the
// redirect ("failed": the service refused the payout).
var refundProblem = map[string]string{
	"failed": "The payment service refused the payout: the refund shows its reason. Send it again once that is sorted out, or cancel it.",
}

// refundRow is one refund on the invoice page.
type refundRow struct {
	*invoice.Refund
	ClaimURL  string // the link to give the customer, while it awaits an address
	CanSend   bool
	CanMark   bool
	CanCancel bool
}

// refundCoin is a coin of the invoice that has something left to refund.
type refundCoin struct {
	Ticker string
	Left   decimal.Decimal
}

// refundForm is the refund form as the staff filled it, kept when it
// failed.
type refundForm struct {
	Of, Amount, Ticker, Key string
}

// refundView is the refund part of the admin's invoice page.
type refundView struct {
	Rows  []refundRow
	Coins []refundCoin // what is left to refund, coin by coin
	Can   bool         // something is left to refund, and the invoice is final
	Sends bool         // the shop has a payout wallet (the API-key form)
	Form  refundForm
	// Failed is the refund whose form failed: its fields keep what was
	// typed (TxID, Reason).
	Failed         string
	TxID, Reason   string
	OverpaidIsLeft bool // the invoice was paid over, or in another coin
}

// isRefundAction reports whether action is one of the refund forms'.
func isRefundAction(action string) bool {
	return action == refundNew || action == refundSend || action == refundMark || action == refundCancel
}

// refundsOf is the refund part of inv's page; form keeps what a failed
// form held.
func (s *shop) refundsOf(inv *invoice.Invoice, form refundForm) refundView {
	v := refundView{Sends: s.opts.client.HasAPIKey(), Form: form}
	// The overpaid part is offered while nothing counts against it yet
	// (Desk.Refund says so when an earlier refund took part of it).
	v.OverpaidIsLeft = (inv.Excess.IsPositive() || inv.Exception == invoice.ExceptionWrongCoin) && !counting(inv)
	if v.Form.Key == "" || v.Form.Of == "" {
		// A fresh form: a new key, so that pressing it twice makes one
		// refund.
		v.Form = refundForm{Of: string(invoice.RefundAll), Key: rand.Text()}
		if v.OverpaidIsLeft {
			v.Form.Of = string(invoice.RefundOverpaid)
		}
	}
	for i := range inv.Refunds {
		rf := &inv.Refunds[i]
		row := refundRow{Refund: rf,
			CanSend:   v.Sends && (rf.Status == invoice.RefundReady || rf.Status == invoice.RefundFailed),
			CanMark:   rf.Status == invoice.RefundReady,
			CanCancel: rf.Status == invoice.RefundAwaitingAddress || rf.Status == invoice.RefundReady || rf.Status == invoice.RefundFailed,
		}
		if rf.Status == invoice.RefundAwaitingAddress {
			row.ClaimURL = s.opts.publicURL + "/pay/" + rf.ClaimPath
		}
		v.Rows = append(v.Rows, row)
	}
	slices.Reverse(v.Rows) // newest first
	for _, tk := range paidCoins(inv) {
		if left := inv.Refundable(tk); left.IsPositive() {
			v.Coins = append(v.Coins, refundCoin{Ticker: tk, Left: left})
		}
	}
	v.Can = inv.Status.Final() && len(v.Coins) > 0
	return v
}

// counting reports whether inv has a refund that counts against what was
// received (not failed or cancelled).
func counting(inv *invoice.Invoice) bool {
	for _, rf := range inv.Refunds {
		if rf.Status != invoice.RefundFailed && rf.Status != invoice.RefundCancelled {
			return true
		}
	}
	return false
}

// paidCoins are the coins inv was paid in: its own (the one chosen
// last) first, if it has one.
func paidCoins(inv *invoice.Invoice) []string {
	var out []string
	if inv.Ticker != "" {
		out = append(out, inv.Ticker)
	}
	for _, p := range inv.Payments {
		if !slices.Contains(out, p.Coin) {
			out = append(out, p.Coin)
		}
	}
	return out
}

// adminRefund carries out a refund action of invoice id's page. The
// guard has checked the form; reason is the form's, as one line.
func (s *shop) adminRefund(w http.ResponseWriter, r *http.Request, id, action, reason string) {
	f := r.PostForm
	form := refundForm{Of: f.Get("of"), Amount: strings.TrimSpace(f.Get("amount")), Ticker: f.Get("ticker"), Key: f.Get("key")}
	refundID := f.Get("refund")
	txid := strings.TrimSpace(f.Get("txid"))
	fail := func(status int, msg string) {
		v := adminInvoiceView{Problem: msg, Failed: action, Reason: reason}
		if action == refundNew {
			v.refundForm = form
		} else {
			v.failedRefund, v.refundTxID = refundID, txid
		}
		s.showInvoice(w, r, status, id, v)
	}
	// A refund action names a refund of this invoice.
	if action != refundNew && !strings.HasPrefix(refundID, id+"-R") {
		fail(http.StatusNotFound, "This refund is not one of this invoice's: reload the page.")
		return
	}
	done := action
	var err error
	switch action {
	case refundNew:
		var o *invoice.RefundOptions
		if o, err = s.refundOptions(r, id, form, reason); err != nil {
			var said errAction
			if errors.As(err, &said) {
				fail(http.StatusUnprocessableEntity, said.Error())
				return
			}
			break
		}
		_, err = s.desk.Refund(r.Context(), id, o)
	case refundSend:
		var rf *invoice.Refund
		rf, err = s.desk.SendRefund(r.Context(), refundID)
		switch {
		case errors.Is(err, cryptapi.ErrOutcomeUnknown):
			done, err = "send-unknown", nil
		case rf != nil && rf.Status == invoice.RefundSending:
			done = "sending"
		case rf != nil && rf.Status == invoice.RefundFailed:
			done = "failed"
		}
	case refundMark:
		if txid == "" {
			fail(http.StatusUnprocessableEntity, "Paste the ID of the transaction that sent the refund: it goes in the invoice's history, for the books.")
			return
		}
		_, err = s.desk.MarkRefundSent(r.Context(), refundID, txid)
		if errors.Is(err, invoice.ErrWrongStatus) {
			// Pressed twice: the first press marked it.
			if rf, gerr := s.desk.GetRefund(r.Context(), refundID); gerr == nil && rf.Status == invoice.RefundSent && rf.TxID == txid {
				err = nil
			}
		}
	case refundCancel:
		if reason == "" {
			fail(http.StatusUnprocessableEntity, "Say why you cancel the refund: the reason goes in the invoice's history.")
			return
		}
		_, err = s.desk.CancelRefund(r.Context(), refundID, reason)
	}
	switch {
	case err == nil, errors.Is(err, invoice.ErrNotNotified):
		q := url.Values{"done": {done}}
		if _, bad := refundProblem[done]; bad {
			q = url.Values{"problem": {done}}
		}
		http.Redirect(w, r, "/admin/invoices/"+url.PathEscape(id)+"?"+q.Encode()+"#refunds", http.StatusSeeOther)
	case errors.Is(err, invoice.ErrNotFound), errors.Is(err, invoice.ErrRefundNotFound):
		fail(http.StatusNotFound, "This refund does not exist: reload the page.")
	case errors.Is(err, invoice.ErrNotRefundable):
		fail(http.StatusConflict, s.notRefundable(r, id, action, form))
	case errors.Is(err, invoice.ErrWrongStatus):
		fail(http.StatusConflict, wrongRefundStatus(action))
	case errors.Is(err, cryptapi.ErrAPIKeyRequired):
		fail(http.StatusConflict, "This shop uses the service without an API key, so it has no payout wallet: send the refund from your own wallet, then record it with Mark as sent.")
	case errors.Is(err, invoice.ErrInvalidOptions) && action == refundNew && s.keyUsed(r, id, form.Key):
		fail(http.StatusConflict, "This form made a refund already, with other values: reload the page for a new form. Nothing else was done.")
	case errors.Is(err, invoice.ErrInvalidOptions):
		fail(http.StatusUnprocessableEntity, invalidRefund(action))
	default:
		s.logger().ErrorContext(r.Context(), "admin: refund failed", "invoice", id, "refund", refundID, "action", action, "error", err)
		fail(http.StatusServiceUnavailable, "This could not be done now: the payment service or the shop's store did not answer. Reload the invoice to see where the refund stands before you try again.")
	}
}

// plainAmount is an amount as the refund form takes it: digits, and
// decimals after a dot; no sign, exponent or separators (an exponent
// such as 1e5000 would make the amount an enormous number).
var plainAmount = regexp.MustCompile(`^[0-9]{1,30}(\.[0-9]{1,30})?$`)

// keyUsed reports whether invoice id has a refund made with key.
func (s *shop) keyUsed(r *http.Request, id, key string) bool {
	inv, err := s.desk.Get(r.Context(), id)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(inv.Refunds, func(rf invoice.Refund) bool { return rf.Key == key })
}

// refundOptions reads the refund form. A mistake in it is an errAction
// that says what to change.
func (s *shop) refundOptions(r *http.Request, id string, form refundForm, reason string) (*invoice.RefundOptions, error) {
	if form.Key == "" || len(form.Key) > 64 {
		return nil, errAction("This form has expired: reload the page and try again.")
	}
	o := &invoice.RefundOptions{Of: invoice.RefundOf(form.Of), Reason: reason, Key: form.Key, Ticker: form.Ticker}
	switch o.Of {
	case invoice.RefundOverpaid, invoice.RefundAll:
	case invoice.RefundCustom:
		if !plainAmount.MatchString(form.Amount) {
			return nil, errAction("Write the amount to refund as a number in the coin, with a dot for decimals, like 0.5.")
		}
		amount, err := decimal.NewFromString(form.Amount)
		if err != nil || !amount.IsPositive() {
			return nil, errAction("Write the amount to refund as a number in the coin, with a dot for decimals, like 0.5.")
		}
		inv, err := s.desk.Get(r.Context(), id)
		if err != nil {
			return nil, err
		}
		coin := form.Ticker
		if coin == "" {
			coin = inv.Ticker
		}
		if coin == inv.Ticker && !amount.Equal(amount.Truncate(inv.Decimals)) {
			return nil, errAction(fmt.Sprintf("%s has %d decimal places: write the amount with no more.", symbol(coin), inv.Decimals))
		}
		o.Amount = amount
	default:
		return nil, errAction("Choose what to refund: the overpaid part, all of it, or an amount.")
	}
	return o, nil
}

// notRefundable says how much is left to refund, after a refund or a
// send that would give back more.
func (s *shop) notRefundable(r *http.Request, id, action string, form refundForm) string {
	inv, err := s.desk.Get(r.Context(), id)
	if err != nil {
		return "That is more than can be refunded. Nothing was done."
	}
	coin := form.Ticker
	if coin == "" {
		coin = inv.Ticker
	}
	left := inv.Refundable(coin)
	switch {
	case action == refundSend:
		return "Less is left to refund than this refund gives back: other refunds count against it. Cancel this one, or make a smaller one."
	case !left.IsPositive() && !inv.Paid.IsPositive() && len(inv.Payments) == 0:
		return "Nothing was paid on this invoice, so there is nothing to refund."
	case !left.IsPositive():
		return fmt.Sprintf("Nothing is left to refund in %s: every confirmed payment is refunded already, or still confirming. Nothing was done.", symbol(coin))
	case form.Of == string(invoice.RefundOverpaid):
		return fmt.Sprintf("Nothing was paid over the price in %s, or it is refunded already. Refund all of it or an amount instead (up to %s). Nothing was done.", symbol(coin), left.String()+" "+symbol(coin))
	}
	return fmt.Sprintf("That is more than can be refunded: %s %s is left (the confirmed payments, less the refunds made). Nothing was done.", left, symbol(coin))
}

// wrongRefundStatus says why a refund action does not fit where the
// invoice or the refund stands.
func wrongRefundStatus(action string) string {
	switch action {
	case refundNew:
		return "This invoice still waits for payment: only a settled, expired or cancelled invoice can be refunded. Nothing was done."
	case refundSend:
		return "Only a refund with the customer's address can be sent, and only once: reload the page to see where it stands."
	case refundMark:
		return "Only a refund that has the customer's address and is not being sent can be marked as sent: reload the page to see where it stands."
	}
	return "A refund that is being sent or is sent cannot be cancelled: reload the page to see where it stands."
}

// invalidRefund says what in a refund form cannot be used.
func invalidRefund(action string) string {
	switch action {
	case refundNew:
		return "The amount or the reason cannot be used: write the amount in the coin, with no more decimal places than it has, and the reason as plain text. Nothing was done."
	case refundMark:
		return "The transaction ID cannot be used: paste it as plain text. Nothing was done."
	}
	return "The reason cannot be used: write it as plain text. Nothing was done."
}
