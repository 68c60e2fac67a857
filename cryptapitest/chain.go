package cryptapitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// ErrBelowMinimum is returned (wrapped) by Pay for a payment below the
// address's minimum transaction. Like the real service, the server ignores
// such a payment: no callback, nothing forwarded, nothing in the logs.
var ErrBelowMinimum = errors.New("cryptapitest: payment below the minimum transaction is ignored")

// ErrUnknownAddress is returned by Pay for an address the server did not
// create for that ticker.
var ErrUnknownAddress = errors.New("cryptapitest: unknown payment address")

// ErrUnknownTx is returned by Confirm for a transaction Pay did not make.
var ErrUnknownTx = errors.New("cryptapitest: unknown transaction")

// setup is one callback URL bound to an address: the result of create.
type setup struct {
	coin          *Coin
	tickerKey     string
	callback      string
	addressIn     string
	outputs       []output
	addressOut    string
	notifyPending bool
	confirmations int
	post, json    bool
	convert       bool
	priority      string
	email         string
	multiToken    bool
	payments      []*payment
}

// payment is one customer transaction to an address.
type payment struct {
	setup         *setup
	coin          *Coin  // the coin paid: the setup's, or another token of its network (multi_token)
	tickerKey     string // coin's ticker, "trc20_usdt"
	prices        map[string]decimal.Decimal
	uuid          string
	txidIn        string
	txidOut       string
	value         decimal.Decimal
	fee           decimal.Decimal
	forwarded     decimal.Decimal
	outs          []Transfer
	confirmations int
	isForwarded   bool
	result        string // pending, sent, done
	price         decimal.Decimal
	lastUpdate    time.Time
	logs          []logEntry
}

// logEntry is one delivery attempt as the logs show it.
type logEntry struct {
	requestURL string
	response   string
	status     int
	nextTry    time.Time
	pending    bool
}

func (p *payment) public() Payment {
	return Payment{
		Ticker:        p.tickerKey,
		UUID:          p.uuid,
		AddressIn:     p.setup.addressIn,
		CallbackURL:   p.setup.callback,
		TxIDIn:        p.txidIn,
		TxIDOut:       p.txidOut,
		Value:         p.value,
		Fee:           p.fee,
		Forwarded:     p.forwarded,
		Outputs:       append([]Transfer(nil), p.outs...),
		Confirmations: p.confirmations,
		Result:        p.result,
	}
}

// Pay makes a customer transaction of amount to addressIn, an address the
// server created for ticker, and returns its hash. The server sees it at
// once, unconfirmed: with pending=1 the pending callback is queued. Call
// Confirm to confirm it.
//
// ticker may also be another token of the address's network when the
// address was created with multi_token=1 (for example trc20_usdc, or trx,
// to an address created for trc20_usdt): the callback's coin is then the
// ticker paid, and the minimum, fee and amounts are that coin's.
//
// A payment below the address's minimum is ignored, as by the real
// service: Pay still returns the hash, with an error wrapping
// ErrBelowMinimum, and the payment never appears in callbacks or logs.
func (s *Server) Pay(ticker, addressIn string, amount decimal.Decimal) (string, error) {
	c, err := s.coinFor(ticker)
	if err != nil {
		return "", err
	}
	if !amount.IsPositive() {
		return "", errors.New("cryptapitest: amount must be positive")
	}
	if !amount.Equal(amount.Truncate(c.Decimals)) {
		return "", fmt.Errorf("cryptapitest: amount has more than %d decimals", c.Decimals)
	}
	t, _ := parseTicker(ticker)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	if txid, ok := s.payToWalletLocked(t.Key(), c, addressIn, amount); ok {
		return txid, nil // a deposit to a payout wallet
	}
	st, ok := s.setupForPaymentLocked(t, addressIn)
	if !ok {
		return "", fmt.Errorf("%w: %s for %s", ErrUnknownAddress, addressIn, t.Key())
	}
	txid := s.newTxIDLocked(c.Chain)
	if min := c.minimumFor(len(st.outputs)); amount.LessThan(min) {
		s.ignored[txid] = true
		s.ignoredOrder = append(s.ignoredOrder, txid)
		s.trimIgnoredLocked()
		return txid, fmt.Errorf("%w: %s < %s %s", ErrBelowMinimum, amount, min, t.Key())
	}
	now := s.clock.Now()
	p := &payment{
		setup:      st,
		coin:       c,
		tickerKey:  t.Key(),
		prices:     s.prices(c),
		uuid:       s.newUUIDLocked(),
		txidIn:     txid,
		value:      amount,
		result:     "pending",
		price:      s.prices(c)["USD"],
		lastUpdate: now,
	}
	st.payments = append(st.payments, p)
	s.payments = append(s.payments, p)
	s.txs[txid] = p
	s.trimPaymentsLocked()
	if st.notifyPending {
		s.enqueueCallbackLocked(p, true, now)
	}
	s.signalLocked()
	return txid, nil
}

// Confirm sets the confirmations of transaction txid (from Pay) to
// confirmations. When they reach the number the address asked for, the
// payment is forwarded (fee deducted, split by shares) and the confirmed
// callback is queued. Confirmations never go down; later calls only update
// the count. Confirming an ignored (below minimum) payment does nothing.
func (s *Server) Confirm(txid string, confirmations int) error {
	if confirmations < 0 {
		return errors.New("cryptapitest: confirmations must not be negative")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	p, ok := s.txs[txid]
	if !ok {
		if s.ignored[txid] {
			return nil
		}
		return fmt.Errorf("%w: %s", ErrUnknownTx, txid)
	}
	if confirmations <= p.confirmations {
		return nil
	}
	now := s.clock.Now()
	p.confirmations = confirmations
	p.lastUpdate = now
	if !p.isForwarded && confirmations >= p.setup.confirmations {
		p.prices = s.prices(p.coin)
		p.price = p.prices["USD"]
		s.forwardLocked(p)
		s.enqueueCallbackLocked(p, false, now)
	}
	s.signalLocked()
	return nil
}

// forwardLocked deducts the fee (fee_percent of the value, at least the
// minimum fee, at most the value) and splits the rest by shares; the last
// output takes the rounding remainder.
func (s *Server) forwardLocked(p *payment) {
	c := p.coin
	fee := p.value.Mul(c.FeePercent).Div(decimal.NewFromInt(100)).Round(c.Decimals)
	if fee.LessThan(c.MinimumFee) {
		fee = c.MinimumFee
	}
	if fee.GreaterThan(p.value) {
		fee = p.value
	}
	fwd := p.value.Sub(fee)
	outs := make([]Transfer, len(p.setup.outputs))
	left := fwd
	for i, o := range p.setup.outputs {
		v := left
		if i < len(outs)-1 {
			v = fwd.Mul(o.share).Truncate(c.Decimals)
			left = left.Sub(v)
		}
		outs[i] = Transfer{Address: o.addr, Value: v}
	}
	p.fee, p.forwarded, p.outs = fee, fwd, outs
	p.txidOut = s.newTxIDLocked(c.Chain)
	p.isForwarded = true
	p.result = "sent"
}

// field is one callback field, kept in order.
type field struct {
	name string
	text string // form and query value
	num  bool   // a JSON number rather than a string
}

// callbackFields builds the payload of a pending or confirmed callback.
func (p *payment) callbackFields(pending bool) []field {
	st, c := p.setup, p.coin
	num := func(n, v string) field { return field{name: n, text: v, num: true} }
	str := func(n, v string) field { return field{name: n, text: v} }
	fs := []field{
		str("uuid", p.uuid),
		str("address_in", st.addressIn),
		str("address_out", st.addressOut),
		str("txid_in", p.txidIn),
	}
	if !pending {
		fs = append(fs, str("txid_out", p.txidOut))
	}
	conf := p.confirmations
	if pending {
		conf = 0
	}
	fs = append(fs,
		num("confirmations", fmt.Sprint(conf)),
		num("value", c.smallest(p.value).String()),
		num("value_coin", p.value.String()),
	)
	if st.convert {
		fs = append(fs, str("value_coin_convert", convertText(p.prices, p.value)))
	}
	if !pending {
		fs = append(fs,
			num("value_forwarded", c.smallest(p.forwarded).String()),
			num("value_forwarded_coin", p.forwarded.String()),
		)
		if st.convert {
			fs = append(fs, str("value_forwarded_coin_convert", convertText(p.prices, p.forwarded)))
		}
		fs = append(fs,
			num("fee", c.smallest(p.fee).String()),
			num("fee_coin", p.fee.String()),
		)
	}
	fs = append(fs,
		str("coin", p.tickerKey),
		num("price", p.price.String()),
		num("pending", map[bool]string{true: "1", false: "0"}[pending]),
		str("result", map[bool]string{true: "pending", false: "sent"}[pending]),
	)
	return fs
}

// convertText is value in every configured fiat currency, as JSON text:
// {"EUR": "11.04", "USD": "12.00"}.
func convertText(prices map[string]decimal.Decimal, v decimal.Decimal) string {
	codes := make([]string, 0, len(prices))
	for k := range prices {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range codes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %q", k, v.Mul(prices[k]).StringFixed(2))
	}
	b.WriteByte('}')
	return b.String()
}

// encodeQuery writes fields as a query string in their order.
func encodeQuery(fs []field) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(f.name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(f.text))
	}
	return b.String()
}

// encodeJSON writes fields as a JSON object in their order.
func encodeJSON(fs []field) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(f.name)
		b.Write(k)
		b.WriteString(": ")
		if f.num {
			b.WriteString(f.text)
		} else {
			v, _ := json.Marshal(f.text)
			b.Write(v)
		}
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// withQuery appends extra to the query of a URL given as text, keeping its
// own query (the merchant's custom parameters) byte for byte. A fragment
// is dropped: it is never sent.
func withQuery(raw, extra string) string {
	raw, _, _ = strings.Cut(raw, "#")
	if extra == "" {
		return raw
	}
	base := strings.TrimRight(raw, "?&")
	if strings.Contains(base, "?") {
		return base + "&" + extra
	}
	return base + "?" + extra
}

// logTime formats a time as the logs do.
func logTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(wire.LogTimeLayout)
}
