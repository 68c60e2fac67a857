package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"sync"
	"time"

	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/shopspring/decimal"
)

// Order states.
const (
	stateNew       = "new"       // no payment seen yet
	stateSeen      = "seen"      // a payment is on its way, unconfirmed
	stateUnderpaid = "underpaid" // confirmed payments add up to less than Amount
	statePaid      = "paid"      // confirmed payments add up to Amount or more
)

// Order is one order and what the callbacks said about it.
type Order struct {
	ID         string          `json:"id"`
	Ticker     string          `json:"ticker"`             // the coin, "trc20_usdt" form
	Amount     decimal.Decimal `json:"amount"`             // to pay, in coin units
	Price      decimal.Decimal `json:"price"`              // as asked, in Currency
	Currency   string          `json:"currency,omitempty"` // "" when Price is in the coin
	AddressIn  string          `json:"address_in"`         // where the customer pays
	Minimum    decimal.Decimal `json:"minimum"`            // smaller payments are lost
	PaymentURI string          `json:"payment_uri"`        // for wallets and QR codes
	State      string          `json:"state"`              // new, seen, underpaid, paid
	Received   decimal.Decimal `json:"received"`           // confirmed amount so far
	TxIDs      []string        `json:"txids,omitempty"`    // confirmed transactions
	CreatedAt  time.Time       `json:"created_at"`
	PaidAt     *time.Time      `json:"paid_at,omitempty"` // when State became paid
	nonce      string          // secret, in the callback URL only
}

// orderStore keeps the orders. memOrders keeps them in this process;
// pgOrders keeps them in PostgreSQL, shared by every replica.
type orderStore interface {
	// Add stores a new order.
	Add(ctx context.Context, o *Order) error
	// Get returns a copy of the order with that id, or errNotFound.
	Get(ctx context.Context, id string) (*Order, error)
	// KnowsAddress is the callback handler's address check: callbacks for
	// an address this shop did not create are refused (403) before they
	// reach Record.
	KnowsAddress(ctx context.Context, addressIn string) (bool, error)
	// Record applies one verified payment callback to its order. The
	// callback handler calls it once per payment and callback type
	// (callback.PaymentKey), so adding up amounts here is safe; an error
	// makes the handler answer 500, and the service delivers again later.
	Record(ctx context.Context, p *callback.Payment) error
}

var (
	errNotFound = errors.New("no such order")
	errMismatch = errors.New("callback parameters do not match the order of its address")
)

// apply checks that p belongs to o and adds it. The order is found by the
// signed address_in; the order id and nonce from the callback URL must match
// it too (for POST callbacks they are not covered by the signature). The
// nonce is compared in constant time, so that its value cannot be guessed
// from response times.
func (o *Order) apply(p *callback.Payment, now time.Time) error {
	nonceOK := subtle.ConstantTimeCompare([]byte(p.Custom.Get("nonce")), []byte(o.nonce)) == 1
	if p.AddressIn != o.AddressIn || p.Custom.Get("order_id") != o.ID || !nonceOK {
		return errMismatch
	}
	if p.Pending {
		// Seen on the chain, not confirmed: nothing is paid yet.
		if o.State == stateNew {
			o.State = stateSeen
		}
		return nil
	}
	o.Received = o.Received.Add(p.ValueCoin)
	o.TxIDs = append(o.TxIDs, p.TxIDIn)
	if o.Received.GreaterThanOrEqual(o.Amount) {
		if o.PaidAt == nil {
			o.PaidAt = &now
		}
		o.State = statePaid
	} else {
		o.State = stateUnderpaid
	}
	return nil
}

func (o *Order) clone() *Order {
	cp := *o
	cp.TxIDs = append([]string(nil), o.TxIDs...)
	if o.PaidAt != nil {
		t := *o.PaidAt
		cp.PaidAt = &t
	}
	return &cp
}

// memOrders keeps the orders in memory: one process only, and they are
// gone when it stops. The callback handler's default de-duplication store
// is in memory too, which fits: both live and die together.
type memOrders struct {
	now func() time.Time

	mu        sync.Mutex
	byID      map[string]*Order
	byAddress map[string]*Order
}

func newMemOrders(now func() time.Time) *memOrders {
	return &memOrders{now: now, byID: map[string]*Order{}, byAddress: map[string]*Order{}}
}

func (m *memOrders) Add(_ context.Context, o *Order) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.byAddress[o.AddressIn]; dup {
		return errors.New("an order for this payment address exists")
	}
	o = o.clone()
	m.byID[o.ID] = o
	m.byAddress[o.AddressIn] = o
	return nil
}

func (m *memOrders) Get(_ context.Context, id string) (*Order, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.byID[id]
	if !ok {
		return nil, errNotFound
	}
	return o.clone(), nil
}

func (m *memOrders) KnowsAddress(_ context.Context, addressIn string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.byAddress[addressIn]
	return ok, nil
}

func (m *memOrders) Record(_ context.Context, p *callback.Payment) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.byAddress[p.AddressIn]
	if !ok {
		return errMismatch
	}
	// Work on a copy, so that a refused callback changes nothing.
	next := o.clone()
	if err := next.apply(p, m.now()); err != nil {
		return err
	}
	*o = *next
	return nil
}
