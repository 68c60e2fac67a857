package cryptapitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// Errors of PayCheckout and PayDeposit.
var (
	// ErrUnknownPayment is returned for a payment id the server did not
	// issue (or one of the other kind: a deposit id given to PayCheckout).
	ErrUnknownPayment = errors.New("cryptapitest: unknown checkout payment or deposit")
	// ErrAlreadyPaid is returned by PayCheckout for a payment already paid.
	ErrAlreadyPaid = errors.New("cryptapitest: checkout payment already paid")
	// ErrExpired is returned by PayCheckout after the payment's expire_at.
	ErrExpired = errors.New("cryptapitest: checkout payment expired")
	// ErrUnderpaid was returned by PayCheckout for less than the order
	// value.
	//
	// Deprecated: PayCheckout now records less than the order value as a
	// partial payment, as the service does, and never returns it.
	ErrUnderpaid = errors.New("cryptapitest: amount is below the order value")
)

// checkout is a hosted checkout payment or deposit page.
type checkout struct {
	id          string
	deposit     bool
	token       string // success_token, checkout only
	paymentURL  string
	redirectURL string
	notifyURL   string
	description string
	value       decimal.Decimal // order value in fiat, checkout only
	expireAt    time.Time
	post        bool
	currency    string
	paid        []hostedPayment
	logs        []notification
}

// hostedPayment is one payment on a hosted page.
type hostedPayment struct {
	coin    string
	amount  decimal.Decimal
	rate    decimal.Decimal // coin price in the checkout currency
	txid    string
	address string
	value   decimal.Decimal // fiat value
	at      time.Time
}

// notification is one IPN delivery attempt as the logs show it.
type notification struct {
	requestURL string
	response   string
	status     int
	at         time.Time
	nextTry    time.Time
}

// WithCheckoutCurrency sets the fiat currency of checkout payments and
// deposits, as the dashboard's payment settings do (default "usd"). The
// coins must have prices in it.
func WithCheckoutCurrency(code string) Option {
	return func(c *config) {
		if strings.TrimSpace(code) == "" {
			c.errs = append(c.errs, errors.New("WithCheckoutCurrency: empty code"))
			return
		}
		c.currency = strings.ToLower(strings.TrimSpace(code))
	}
}

// handleCheckout creates a checkout payment (deposit false) or a deposit
// page.
// The hosted page's URL is built from the request's Host, so that it
// points where the client reached the server (through a proxy too).
func (s *Server) handleCheckout(w http.ResponseWriter, r *http.Request, q url.Values, deposit bool) {
	co := &checkout{deposit: deposit, description: q.Get("item_description"), currency: s.currency}
	var err error
	if co.post, err = flag(q, "post"); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	co.notifyURL = q.Get("notify_url")
	if deposit && co.notifyURL == "" {
		writeError(w, http.StatusBadRequest, "notify_url is required")
		return
	}
	if co.notifyURL != "" && !validCallbackURL(co.notifyURL) {
		writeError(w, http.StatusBadRequest, "Invalid notify_url")
		return
	}
	if cur := strings.ToLower(strings.TrimSpace(q.Get("currency"))); cur != "" {
		if !s.hasPricesIn(cur) {
			writeError(w, http.StatusBadRequest, "Currency not supported: "+cur)
			return
		}
		co.currency = cur
	}
	now := s.clock.Now()
	if !deposit {
		co.redirectURL = q.Get("redirect_url")
		if co.redirectURL == "" {
			writeError(w, http.StatusBadRequest, "redirect_url is required")
			return
		}
		if !validCallbackURL(co.redirectURL) {
			writeError(w, http.StatusBadRequest, "Invalid redirect_url")
			return
		}
		v, err := wire.ParseDecimal(q.Get("value"))
		if q.Get("value") == "" || err != nil || !v.IsPositive() {
			writeError(w, http.StatusBadRequest, "value must be a positive number")
			return
		}
		co.value = v
		if e := q.Get("expire_at"); e != "" {
			sec, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				writeError(w, http.StatusBadRequest, "expire_at must be epoch seconds")
				return
			}
			co.expireAt = time.Unix(sec, 0)
			if co.expireAt.Before(now.Add(time.Hour)) {
				writeError(w, http.StatusBadRequest, "expire_at must be at least one hour ahead")
				return
			}
		}
	}
	s.mu.Lock()
	co.id = s.newTokenLocked("payment id", 32)
	if !deposit {
		co.token = s.newTokenLocked("success token", 40)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	co.paymentURL = scheme + "://" + r.Host + "/pay/" + co.id + "/"
	s.checkouts[co.id] = co
	s.checkoutOrder = append(s.checkoutOrder, co.id)
	s.trimCheckoutsLocked()
	s.mu.Unlock()
	resp := map[string]string{"status": "success", "payment_url": co.paymentURL, "payment_id": co.id}
	if !deposit {
		resp["success_token"] = co.token
	}
	writeJSON(w, http.StatusOK, resp)
}

// hasPricesIn reports whether some coin has a price in fiat code cur
// (lower case).
func (s *Server) hasPricesIn(cur string) bool {
	up := strings.ToUpper(cur)
	for _, c := range s.coins {
		if _, ok := s.prices(c)[up]; ok {
			return true
		}
	}
	return false
}

// paidFiatLocked is what the payments of co are worth in its currency.
func (co *checkout) paidFiat() decimal.Decimal {
	total := decimal.Zero
	for _, p := range co.paid {
		total = total.Add(p.amount.Mul(p.rate))
	}
	return total
}

// fullyPaid reports whether a checkout's payments cover its value.
func (co *checkout) fullyPaid() bool {
	return len(co.paid) > 0 && !co.paidFiat().LessThan(co.value)
}

// expiredAt reports whether an unpaid checkout has expired at now.
func (co *checkout) expiredAt(now time.Time) bool {
	return !co.deposit && !co.expireAt.IsZero() && now.After(co.expireAt) && !co.fullyPaid()
}

// notificationsLocked renders the IPN log of a hosted page.
func (co *checkout) notifications() []map[string]string {
	notes := make([]map[string]string, 0, len(co.logs))
	for _, n := range co.logs {
		status := ""
		if n.status != 0 {
			status = strconv.Itoa(n.status)
		}
		notes = append(notes, map[string]string{
			"request_url":     n.requestURL,
			"responses":       n.response,
			"response_status": status,
			"timestamp":       logTime(n.at),
			"next_try":        logTime(n.nextTry),
		})
	}
	return notes
}

// handleCheckoutLogs answers the published shapes: for a checkout the
// state flags and one payment_data entry per coin that has a price in the
// checkout's currency; for a deposit page the deposits and their total.
func (s *Server) handleCheckoutLogs(w http.ResponseWriter, q url.Values, deposit bool) {
	id := q.Get("token")
	if id == "" {
		writeError(w, http.StatusBadRequest, "token is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	co, ok := s.checkouts[id]
	if !ok || co.deposit != deposit {
		writeError(w, http.StatusNotFound, "Payment not found")
		return
	}
	if deposit {
		deposits := make([]map[string]any, len(co.paid))
		total := decimal.Zero
		for i, p := range co.paid {
			total = total.Add(p.value)
			deposits[i] = map[string]any{
				"txid": p.txid, "coin": p.coin, "value_coin": p.amount.String(), "value": p.value.String(),
				"exchange_rate": p.rate.String(), "address": p.address, "timestamp": logTime(p.at),
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"status": "success", "deposits": deposits, "total_deposited": total.String(),
			"currency": strings.ToUpper(co.currency), "notifications": co.notifications(),
		})
		return
	}
	paidFiat := co.paidFiat()
	outstandingFiat := co.value.Sub(paidFiat)
	if outstandingFiat.IsNegative() {
		outstandingFiat = decimal.Zero
	}
	up := strings.ToUpper(co.currency)
	var data []map[string]any
	for _, k := range s.Tickers() {
		c := s.coins[k]
		rate := s.prices(c)[up]
		if rate.IsZero() {
			continue
		}
		paid := decimal.Zero
		txids := []string{}
		for _, p := range co.paid {
			if p.coin == k {
				paid = paid.Add(p.amount)
				txids = append(txids, p.txid)
			}
		}
		data = append(data, map[string]any{
			"value":             coinCovering(co.value, rate, c.Decimals).String(),
			"value_paid":        paid.String(),
			"value_outstanding": coinCovering(outstandingFiat, rate, c.Decimals).String(),
			"exchange_rate":     decimal.NewFromInt(1).DivRound(rate, 10).String(),
			"coin":              k,
			"txid":              txids,
		})
	}
	paid := co.fullyPaid()
	writeJSON(w, http.StatusOK, map[string]any{
		"status":        "success",
		"is_paid":       paid,
		"is_pending":    false,
		"is_expired":    co.expiredAt(s.clock.Now()),
		"is_partial":    len(co.paid) > 0 && !paid,
		"payment_data":  data,
		"notifications": co.notifications(),
	})
}

// handlePayPage serves a minimal hosted payment page.
func (s *Server) handlePayPage(w http.ResponseWriter, _ *http.Request, id string) {
	s.mu.Lock()
	co, ok := s.checkouts[id]
	var desc, value, state string
	if ok {
		desc, value, state = co.description, co.value.String()+" "+strings.ToUpper(co.currency), "unpaid"
		if co.deposit {
			value = "any amount"
		}
		switch {
		case co.deposit && len(co.paid) > 0, co.fullyPaid():
			state = "paid"
		case len(co.paid) > 0:
			state = "partially paid"
		case co.expiredAt(s.clock.Now()):
			state = "expired"
		}
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "payment not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>Payment</title><h1>%s</h1><p>Amount: %s</p><p>Status: %s</p>\n",
		html.EscapeString(desc), html.EscapeString(value), state)
}

// PayCheckout pays checkout payment paymentID (the payment_id of
// /checkout/request/) with amount of coin, and sends an IPN to its
// notify_url. A zero amount pays exactly what is outstanding at the coin's
// price. Less than that is a partial payment: the logs show is_partial and
// the IPN says is_paid=0; further payments, in any coin, add up until the
// order value is covered. A fully paid payment refuses more
// (ErrAlreadyPaid), and so does an expired one (ErrExpired).
func (s *Server) PayCheckout(paymentID, coin string, amount decimal.Decimal) error {
	return s.payHosted(paymentID, coin, amount, false)
}

// PayDeposit makes a deposit of amount of coin to deposit page paymentID
// and sends the IPN to its notify_url. A page takes any number of deposits
// of any positive amount.
func (s *Server) PayDeposit(paymentID, coin string, amount decimal.Decimal) error {
	if !amount.IsPositive() {
		return errors.New("cryptapitest: deposit amount must be positive")
	}
	return s.payHosted(paymentID, coin, amount, true)
}

func (s *Server) payHosted(id, coin string, amount decimal.Decimal, deposit bool) error {
	c, err := s.coinFor(coin)
	if err != nil {
		return err
	}
	if amount.IsNegative() {
		return errors.New("cryptapitest: amount must not be negative")
	}
	t, _ := parseTicker(coin)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	co, ok := s.checkouts[id]
	if !ok || co.deposit != deposit {
		return fmt.Errorf("%w: %s", ErrUnknownPayment, id)
	}
	now := s.clock.Now()
	rate := s.prices(c)[strings.ToUpper(co.currency)]
	if rate.IsZero() {
		return fmt.Errorf("cryptapitest: %s has no price in %s", t.Key(), co.currency)
	}
	if !deposit {
		if co.fullyPaid() {
			return ErrAlreadyPaid
		}
		if co.expiredAt(now) {
			return ErrExpired
		}
		if amount.IsZero() {
			amount = coinCovering(co.value.Sub(co.paidFiat()), rate, c.Decimals)
		}
	}
	hp := hostedPayment{
		coin: t.Key(), amount: amount, rate: rate, at: now,
		txid:    s.newTxIDLocked(c.Chain),
		address: s.newAddressLocked(c.Chain),
		value:   amount.Mul(rate).Round(2),
	}
	co.paid = append(co.paid, hp)
	if co.notifyURL != "" {
		s.enqueueIPNLocked(co, hp, now)
	}
	s.signalLocked()
	return nil
}

// coinCovering is the least amount with the given decimals whose value at
// rate is at least fiat.
func coinCovering(fiat, rate decimal.Decimal, decimals int32) decimal.Decimal {
	amount := fiat.DivRound(rate, decimals+2).RoundCeil(decimals)
	unit := decimal.New(1, -decimals)
	for amount.Mul(rate).LessThan(fiat) {
		amount = amount.Add(unit)
	}
	return amount
}

// enqueueIPNLocked queues the IPN of a hosted payment hp, the last of
// co.paid.
func (s *Server) enqueueIPNLocked(co *checkout, hp hostedPayment, now time.Time) {
	str := func(n, v string) field { return field{name: n, text: v} }
	num := func(n, v string) field { return field{name: n, text: v, num: true} }
	paidCoin, paidFiat := decimal.Zero, decimal.Zero
	for _, p := range co.paid {
		if p.coin == hp.coin {
			paidCoin = paidCoin.Add(p.amount)
		}
		paidFiat = paidFiat.Add(p.value)
	}
	isPaid, kind := "1", "deposit"
	fs := []field{str("payment_url", co.paymentURL), str("payment_id", co.id)}
	if co.deposit {
		fs = append(fs, num("value", hp.value.String()))
		paidCoin, paidFiat = hp.amount, hp.value
	} else {
		kind = "payment"
		if !co.fullyPaid() {
			isPaid = "0"
		}
		fs = append(fs,
			str("redirect_url", co.redirectURL),
			num("value", co.value.String()),
			str("success_token", co.token),
		)
	}
	fs = append(fs,
		str("currency", co.currency),
		str("is_paid", isPaid),
		str("paid_amount", paidCoin.String()),
		num("paid_amount_fiat", paidFiat.String()),
		str("received_amount", hp.amount.String()),
		num("received_amount_fiat", hp.value.String()),
		str("paid_coin", hp.coin),
		num("exchange_rate", hp.rate.String()),
		str("txid", hp.txid),
		str("address", hp.address),
		str("status", "done"),
		str("type", kind),
	)
	j := s.newJob(co.notifyURL, fs, co.post, false)
	j.kind = "ipn"
	j.group = "hosted:" + co.id
	j.record = func(ok bool, status int, answer string, nextTry, at time.Time) {
		co.logs = append(co.logs, notification{requestURL: j.url, response: answer, status: status, at: at, nextTry: nextTry})
	}
	s.addJobLocked(j, now)
}

// ---- payouts ----

// Payout is a payout request the server recorded.
type Payout struct {
	// ID is the request id (the bulk answer's request_ids entry).
	ID string
	// Ticker is the coin, "btc" or "trc20_usdt".
	Ticker string
	// Address is the destination.
	Address string
	// Value is the amount, in coin units.
	Value decimal.Decimal
	// Bulk tells whether it came from a bulk request.
	Bulk bool
	// At is the server's time of the request.
	At time.Time
	// Status is the request's state: "pending" until a payout pays it,
	// then "processing" and "done", or "rejected" when its payout failed.
	Status string
	// PayoutID is the payout that pays the request, once there is one.
	PayoutID string
}

// Payouts returns the payout requests recorded so far, oldest first.
func (s *Server) Payouts() []Payout {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Payout(nil), s.payouts...)
}

func (s *Server) handlePayout(w http.ResponseWriter, q url.Values, c *Coin, key string) {
	addr := q.Get("address")
	if addr == "" {
		writeError(w, http.StatusBadRequest, "address is required")
		return
	}
	if !validAddress(c.Chain, addr) {
		writeError(w, http.StatusBadRequest, "Invalid address for "+key)
		return
	}
	v, err := wire.ParseDecimal(q.Get("value"))
	if q.Get("value") == "" || err != nil || !v.IsPositive() {
		writeError(w, http.StatusBadRequest, "value must be a positive number")
		return
	}
	s.mu.Lock()
	s.addPayoutLocked(key, addr, v, false)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"status": "success"})
}

func (s *Server) addPayoutLocked(key, addr string, v decimal.Decimal, bulk bool) int {
	id := len(s.payouts) + 1
	s.payouts = append(s.payouts, Payout{
		ID: strconv.Itoa(id), Ticker: key, Address: addr, Value: v, Bulk: bulk, At: s.clock.Now(), Status: requestPending,
	})
	return id
}

// bulkOutput is one output of a bulk payout body.
type bulkOutput struct {
	addr string
	v    decimal.Decimal
}

// handleBulkPayout reads {"outputs": {"<address>": <amount>, ...}} and
// records one payout request per output, in the order of the body.
func (s *Server) handleBulkPayout(w http.ResponseWriter, r *http.Request, c *Coin, key string) {
	outs, ok := readBulkOutputs(w, r, c, key)
	if !ok {
		return
	}
	ids := make([]int, len(outs))
	s.mu.Lock()
	for i, o := range outs {
		ids[i] = s.addPayoutLocked(key, o.addr, o.v, true)
	}
	s.signalLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "request_ids": ids})
}

// readBulkOutputs reads and checks a bulk payout body; it answers the
// error itself.
func readBulkOutputs(w http.ResponseWriter, r *http.Request, c *Coin, key string) ([]bulkOutput, bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "could not read the body")
		return nil, false
	}
	var body struct {
		Outputs json.RawMessage `json:"outputs"`
	}
	if err := json.Unmarshal(data, &body); err != nil || len(body.Outputs) == 0 {
		writeError(w, http.StatusBadRequest, `body must be {"outputs": {"<address>": <amount>}}`)
		return nil, false
	}
	var outs []bulkOutput
	dec := json.NewDecoder(bytes.NewReader(body.Outputs))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		writeError(w, http.StatusBadRequest, "outputs must be an object")
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		addr, ok := tok.(string)
		var raw json.RawMessage
		if err != nil || !ok || dec.Decode(&raw) != nil {
			writeError(w, http.StatusBadRequest, "outputs must be an object")
			return nil, false
		}
		v, err := wire.DecodeDecimal(raw)
		if err != nil || !v.IsPositive() {
			writeError(w, http.StatusBadRequest, "Invalid amount for "+addr)
			return nil, false
		}
		if !validAddress(c.Chain, addr) {
			writeError(w, http.StatusBadRequest, "Invalid address for "+key+": "+addr)
			return nil, false
		}
		outs = append(outs, bulkOutput{addr, v})
	}
	if len(outs) == 0 {
		writeError(w, http.StatusBadRequest, "outputs is empty")
		return nil, false
	}
	return outs, true
}
