package invoice

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// Limits of CreateOptions. A value outside them is refused with
// ErrInvalidOptions before anything is sent or stored.
const (
	// MaxOrderIDLen and MaxDescriptionLen bound OrderID and Description,
	// in bytes of UTF-8.
	MaxOrderIDLen     = 200
	MaxDescriptionLen = 1000
	// MinDuration and MaxDuration bound QuoteTTL, ExpiresIn and
	// MonitorFor when set.
	MinDuration = time.Minute
	MaxDuration = 30 * 24 * time.Hour
	// MaxDecimalPlaces bounds the decimal places of Price and Tolerance;
	// MaxPrice bounds Price (exclusive).
	MaxDecimalPlaces = 18
)

// MaxPrice is the largest Price accepted, exclusive: 10^18.
var MaxPrice = decimal.New(1, 18)

// CreateOptions are the parameters of Create. Create checks every field
// before it sends or stores anything, and refuses an unusable one with
// ErrInvalidOptions and the field's name.
type CreateOptions struct {
	// OrderID is the merchant's reference, kept on the invoice; it never
	// names the page. Up to MaxOrderIDLen bytes of UTF-8 without control
	// characters.
	OrderID string
	// Description is what the customer buys ("2 × Coffee mug"), shown on
	// the payment page. Up to MaxDescriptionLen bytes of UTF-8 without
	// control characters.
	Description string
	// Ticker is the coin ("btc", "trc20_usdt" or "trc20/usdt"). Required
	// unless Tickers is set.
	Ticker string
	// Tickers are the coins the customer may choose from, in the order
	// the payment page lists them (at most MaxTickers, each once). With
	// Tickers set and Ticker empty, the invoice starts without an
	// address and the payment page asks the customer to choose; the
	// address is created then, for that coin only (Desk.Choose). With
	// Ticker set too, Ticker must be one of them: the invoice starts in
	// that coin, and the customer may switch. Price must then be in a
	// fiat Currency, and the destinations are in Destinations.
	Tickers []string
	// Destinations maps each coin of Tickers (in any of its forms) to its
	// destination address, valid for that coin. Every coin needs one,
	// except with an API key, where a coin left out uses the dashboard's
	// address. Address and Outputs stay the single-coin form: with
	// Tickers, leave them empty.
	Destinations map[string]string
	// Price is what the order costs, in Currency. Required: positive,
	// below MaxPrice, at most MaxDecimalPlaces decimal places.
	Price decimal.Decimal
	// Currency is a fiat code ("USD"), or "" (or the coin itself) for a
	// price in the coin.
	Currency string
	// Callback is the shop's callback URL, where Handler is mounted; the
	// Desk adds the invoice ID and a random nonce to it (ParamInvoice,
	// ParamNonce), so it must not carry them already. Required.
	Callback string
	// Address is the destination, or Outputs for several (see
	// cryptapi.CreateOptions): one of them, except with an API key, where
	// both may be left out to use the dashboard's addresses.
	Address string
	Outputs []cryptapi.Output
	// Tolerance is the fraction of Price that may be missing for the
	// invoice to count as paid in full, from 0 (the default) up to but
	// excluding 1; shops commonly use 0.01 (1%). It decides when an
	// invoice is paid, not how much is asked.
	Tolerance decimal.Decimal
	// QuoteTTL is how long a quote lasts (default DefaultQuoteTTL; between
	// MinDuration and MaxDuration).
	QuoteTTL time.Duration
	// ExpiresIn is how long the invoice waits for full payment (default
	// DefaultExpiresIn; between MinDuration and MaxDuration).
	ExpiresIn time.Duration
	// MonitorFor is how long after ExpiresIn a payment seen in full but
	// not confirmed is still waited for (default DefaultMonitorFor;
	// between MinDuration and MaxDuration). When it ends unconfirmed (a
	// dropped transaction), the invoice expires.
	MonitorFor time.Duration
	// MultiToken makes the address accept other tokens of its network
	// (multi_token=1); they are recorded as ExceptionWrongCoin.
	MultiToken bool
}

// request is CreateOptions checked and written one way: defaults applied,
// the ticker in "trc20_usdt" form, the currency in upper case ("" for a
// price in the coin), destinations without surrounding spaces. Two
// Creates ask for the same invoice exactly when their requests are equal.
type request struct {
	OrderID     string          `json:"order_id,omitempty"`
	Description string          `json:"description,omitempty"`
	Ticker      string          `json:"ticker"`
	Price       decimal.Decimal `json:"price"`
	Currency    string          `json:"currency,omitempty"`
	Callback    string          `json:"callback"`
	Address     string          `json:"address,omitempty"`
	Outputs     []output        `json:"outputs,omitempty"`
	Tolerance   decimal.Decimal `json:"tolerance"`
	QuoteTTL    Duration        `json:"quote_ttl"`
	ExpiresIn   Duration        `json:"expires_in"`
	MonitorFor  Duration        `json:"monitor_for"`
	MultiToken  bool            `json:"multi_token,omitempty"`
	// Tickers and Destinations: the coins offered (CreateOptions.Tickers)
	// and their destinations, in "trc20_usdt" form.
	Tickers      []string          `json:"tickers,omitempty"`
	Destinations map[string]string `json:"destinations,omitempty"`
}

// equal reports whether a and b ask for the same invoice (amounts
// compared by value: 25 and 25.00 are the same price).
func (a *request) equal(b *request) bool {
	if a.OrderID != b.OrderID || a.Description != b.Description || a.Ticker != b.Ticker ||
		a.Currency != b.Currency || a.Callback != b.Callback || a.Address != b.Address ||
		!a.Price.Equal(b.Price) || !a.Tolerance.Equal(b.Tolerance) || a.QuoteTTL != b.QuoteTTL ||
		a.ExpiresIn != b.ExpiresIn || a.MonitorFor != b.MonitorFor || a.MultiToken != b.MultiToken ||
		len(a.Outputs) != len(b.Outputs) || !slices.Equal(a.Tickers, b.Tickers) || !maps.Equal(a.Destinations, b.Destinations) {
		return false
	}
	for i := range a.Outputs {
		if a.Outputs[i].Address != b.Outputs[i].Address || !a.Outputs[i].Share.Equal(b.Outputs[i].Share) {
			return false
		}
	}
	return true
}

// output is one destination of a request.
type output struct {
	Address string          `json:"address"`
	Share   decimal.Decimal `json:"share"`
}

// invalid is ErrInvalidOptions naming the field.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOptions, field, fmt.Sprintf(format, args...))
}

// checkText refuses text that cannot be stored or shown as it is: longer
// than max bytes, not UTF-8, with control characters (a NUL included) or
// bidirectional controls (which can make a page show text in another
// order than it is).
func checkText(field, s string, max int) error {
	if len(s) > max {
		return invalid(field, "longer than %d bytes", max)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return invalid(field, "control character %U", r)
		}
	}
	return nil
}

// checkDecimal refuses an amount with more than MaxDecimalPlaces places.
func checkDecimal(field string, d decimal.Decimal) error {
	if !d.Truncate(MaxDecimalPlaces).Equal(d) {
		return invalid(field, "more than %d decimal places", MaxDecimalPlaces)
	}
	return nil
}

// checkDuration refuses a duration that is set but outside
// [MinDuration, MaxDuration]; it returns def for 0.
func checkDuration(field string, d, def time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return def, nil
	case d < MinDuration || d > MaxDuration:
		return 0, invalid(field, "%s is outside [%s, %s]", d, MinDuration, MaxDuration)
	}
	return d, nil
}

// check validates every field of o, without I/O, and returns the request
// it stands for. keyed tells whether the client has an API key (then no
// destination means the dashboard's).
func (o *CreateOptions) check(keyed bool) (request, error) {
	if o == nil {
		return request{}, fmt.Errorf("%w: nil options", ErrInvalidOptions)
	}
	var q request
	if err := checkText("OrderID", o.OrderID, MaxOrderIDLen); err != nil {
		return q, err
	}
	if err := checkText("Description", o.Description, MaxDescriptionLen); err != nil {
		return q, err
	}
	var t ticker.Ticker
	if len(o.Tickers) == 0 || strings.TrimSpace(o.Ticker) != "" {
		var err error
		if t, err = ticker.Parse(strings.TrimSpace(o.Ticker)); err != nil {
			return q, fmt.Errorf("%w: Ticker: %w", ErrInvalidOptions, cryptapi.ErrInvalidTicker)
		}
	}
	switch {
	case !o.Price.IsPositive():
		return q, invalid("Price", "must be positive")
	case o.Price.GreaterThanOrEqual(MaxPrice):
		return q, invalid("Price", "must be below %s", MaxPrice)
	case o.Tolerance.IsNegative() || o.Tolerance.GreaterThanOrEqual(decimal.NewFromInt(1)):
		return q, invalid("Tolerance", "must be in [0, 1)")
	}
	if err := checkDecimal("Price", o.Price); err != nil {
		return q, err
	}
	if err := checkDecimal("Tolerance", o.Tolerance); err != nil {
		return q, err
	}
	quoteTTL, err := checkDuration("QuoteTTL", o.QuoteTTL, DefaultQuoteTTL)
	if err != nil {
		return q, err
	}
	expiresIn, err := checkDuration("ExpiresIn", o.ExpiresIn, DefaultExpiresIn)
	if err != nil {
		return q, err
	}
	monitorFor, err := checkDuration("MonitorFor", o.MonitorFor, DefaultMonitorFor)
	if err != nil {
		return q, err
	}
	currency := strings.ToUpper(strings.TrimSpace(o.Currency))
	if len(o.Tickers) == 0 && (strings.EqualFold(currency, t.Coin) || strings.EqualFold(currency, t.Key())) {
		currency = ""
	}
	if currency != "" && !validCurrency(currency) {
		return q, invalid("Currency", "must be a currency code such as USD")
	}
	tickers, dests, err := checkCoins(o, t.Key(), currency, keyed)
	if err != nil {
		return q, err
	}
	if strings.TrimSpace(o.Callback) == "" {
		return q, fmt.Errorf("%w: Callback: %w", ErrInvalidOptions, cryptapi.ErrCallbackRequired)
	}
	_, cq, err := callbackurl.Parse(o.Callback)
	if err != nil {
		return q, fmt.Errorf("%w: Callback: %w: %w", ErrInvalidOptions, cryptapi.ErrInvalidCallback, err)
	}
	if cq.Has(ParamInvoice) || cq.Has(ParamNonce) {
		return q, invalid("Callback", "the URL already carries %q or %q", ParamInvoice, ParamNonce)
	}
	// The URL the service will be given must be one it accepts, with the
	// invoice's parameters added.
	if _, err := cryptapi.CallbackURL(o.Callback, url.Values{ParamInvoice: {probeID}, ParamNonce: {probeID}}); err != nil {
		return q, fmt.Errorf("%w: Callback: %w", ErrInvalidOptions, err)
	}
	var outs []output
	if tickers == nil {
		if outs, err = checkDestination(t.Key(), o.Address, o.Outputs, keyed); err != nil {
			return q, err
		}
	}
	return request{
		OrderID: o.OrderID, Description: o.Description, Ticker: t.Key(), Price: o.Price,
		Currency: currency, Callback: o.Callback, Address: strings.TrimSpace(o.Address), Outputs: outs,
		Tolerance: o.Tolerance, QuoteTTL: Duration{quoteTTL}, ExpiresIn: Duration{expiresIn},
		MonitorFor: Duration{monitorFor}, MultiToken: o.MultiToken, Tickers: tickers, Destinations: dests,
	}, nil
}

// checkDestination refuses, with ErrInvalidOptions, the destinations the
// client would refuse before sending (cryptapi.ValidateDestination: each
// address of the coin's network, shares, outputs), and none without an
// API key. It returns the outputs without surrounding spaces.
func checkDestination(tk, addr string, outs []cryptapi.Output, keyed bool) ([]output, error) {
	field := "Address"
	if strings.TrimSpace(addr) == "" && len(outs) > 0 {
		field = "Outputs"
	}
	if strings.TrimSpace(addr) == "" && len(outs) == 0 && !keyed {
		return nil, fmt.Errorf("%w: Address: %w", ErrInvalidOptions, cryptapi.ErrAddressRequired)
	}
	if err := cryptapi.ValidateDestination(tk, addr, outs); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidOptions, field, err)
	}
	var q []output
	for _, o := range outs {
		q = append(q, output{Address: strings.TrimSpace(o.Address), Share: o.Share})
	}
	return q, nil
}

func validCurrency(s string) bool {
	if len(s) < 2 || len(s) > 10 {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// outputs returns the request's destinations in the client's form.
func (q *request) outputs() []cryptapi.Output {
	var outs []cryptapi.Output
	for _, o := range q.Outputs {
		outs = append(outs, cryptapi.Output{Address: o.Address, Share: o.Share})
	}
	return outs
}

// Create makes an invoice: it checks every option (nothing is sent or
// stored if one is wrong), reads the coin's info (precision, display name
// and price in Currency), converts Price at that quote, rounded up to the
// coin's precision, and asks for the payment with
// cryptapi.Client.RequestPayment, which refuses an amount below the
// coin's minimum for the number of destinations
// (*cryptapi.BelowMinimumError, no address created). The address is
// created with pending callbacks on and a callback URL made of Callback,
// the invoice's ID and a random nonce that only this invoice knows. The
// invoice is stored before it is returned.
//
// An order has one open invoice. With OrderID set, Create first reserves
// the order in the store: while the order has an open invoice (new or
// processing, its deadline not passed), a Create with the same options
// (a retry after a timeout; a default and the same value given
// explicitly are the same) returns that invoice, same ID and address, and
// asks the service for nothing, and one with other options fails with
// ErrOrderOpen. Two Creates racing for an order (on one replica or
// several) make one invoice: the others wait for it. Once the order's
// invoice is final (settled, expired, invalid), Create makes a new one;
// an invoice whose deadline passed before Tick stored its expiry is
// expired first (and onChange told), as Tick would.
func (d *Desk) Create(ctx context.Context, o *CreateOptions) (*Invoice, error) {
	q, err := o.check(d.c.HasAPIKey())
	if err != nil {
		return nil, err
	}
	r := reservation(q, d.now())
	if q.OrderID == "" {
		e, err := d.open(ctx, r)
		if err != nil {
			return nil, err
		}
		e.at = d.now()
		n, _, err := transition(r, e)
		if err != nil {
			return nil, err
		}
		if err := d.store.Insert(ctx, n); err != nil {
			return nil, err
		}
		return n.Invoice.Clone(), nil
	}
	r, inv, err := d.reserve(ctx, r)
	if err != nil || inv != nil {
		return inv, err
	}
	e, err := d.open(ctx, r)
	if err != nil {
		d.release(ctx, r)
		return nil, err
	}
	n, _, err := d.apply(ctx, r.ID(), "", e)
	if err != nil {
		// The address exists but is not stored: the next Create of the
		// same request takes the reservation over at once, and the
		// service gives it the same address (same callback URL).
		d.release(ctx, r)
		return nil, err
	}
	return n.Invoice.Clone(), nil
}

// errTaken means a reservation was taken over by someone else first.
var errTaken = errors.New("invoice: reservation taken")

// reserve stores r, a reservation, as the holder of its order, and
// returns it, claimed for the Desk's lease; or returns the order's open
// invoice when it was made for the same request. It waits while another
// Create of the same request holds the order, takes over a reservation
// whose Create gave up or died (its claim lapsed), and expires an open
// invoice whose deadline passed.
func (d *Desk) reserve(ctx context.Context, r *Record) (*Record, *Invoice, error) {
	order := r.Invoice.OrderID
	wait := 20 * time.Millisecond
	for range 10000 {
		r.claimUntil = d.now().Add(d.lease)
		err := d.store.Insert(ctx, r)
		if err == nil {
			return r, nil, nil
		}
		if !errors.Is(err, ErrOrderOpen) {
			return nil, nil, err
		}
		h, err := d.holder(ctx, order)
		if err != nil {
			return nil, nil, err
		}
		if h == nil {
			continue // released meanwhile
		}
		now := d.now()
		same := h.req.equal(&r.req)
		switch {
		case h.Invoice.Status != statusReserved:
			if st := h.Invoice.AsOf(now).Status; st == StatusNew || st == StatusProcessing {
				if same {
					return nil, h.Invoice.Clone(), nil
				}
				return nil, nil, fmt.Errorf("%w: invoice %s was created with other options", ErrOrderOpen, h.ID())
			}
			// Its deadline passed: store that, as Tick would, which frees
			// the order.
			if _, _, err := d.apply(ctx, h.ID(), "", event{kind: evClock}); err != nil {
				return nil, nil, err
			}
			if err := d.notify(ctx, h.ID()); err != nil {
				d.logError(ctx, "invoice change not passed on (Tick offers it again)", h.ID(), err)
			}
		case now.Before(h.claimUntil):
			if !same {
				return nil, nil, fmt.Errorf("%w: another Create with other options is making its invoice", ErrOrderOpen)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, nil, ctx.Err()
			case <-t.C:
			}
			wait = min(2*wait, 500*time.Millisecond)
		default:
			taken, err := d.takeOver(ctx, h, r, same)
			if errors.Is(err, errTaken) {
				continue
			}
			return taken, nil, err
		}
	}
	return nil, nil, fmt.Errorf("invoice: create: the store keeps answering that order %q is open, and shows no holder", order)
}

// holder returns the record that holds order open, nil if none does.
func (d *Desk) holder(ctx context.Context, order string) (*Record, error) {
	for h, err := range d.store.List(ctx, &ListOptions{OrderID: order}) {
		if err != nil {
			return nil, err
		}
		if h.OpenOrder() == order {
			return h, nil
		}
	}
	return nil, nil
}

// takeOver claims a lapsed reservation for r's request: the same one
// keeps its nonce (the service gives the same address for the same
// callback URL), another gets a new nonce (and so a new address: the
// service never changes the destination of a callback URL).
func (d *Desk) takeOver(ctx context.Context, h, r *Record, same bool) (*Record, error) {
	return d.store.Update(ctx, h.ID(), "", func(cur *Record) (*Record, error) {
		now := d.now()
		if cur.Invoice.Status != statusReserved || now.Before(cur.claimUntil) {
			return nil, errTaken
		}
		n := cur.clone()
		if !same {
			n = reservation(r.req, cur.Invoice.CreatedAt)
			n.Invoice.ID = cur.ID()
		}
		n.claimUntil = now.Add(d.lease)
		return n, nil
	})
}

// release gives a reservation up when its Create failed, so that the
// next Create of the order need not wait for the claim to lapse.
func (d *Desk) release(ctx context.Context, r *Record) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := d.store.Update(ctx, r.ID(), "", func(cur *Record) (*Record, error) {
		if cur.Invoice.Status != statusReserved || cur.nonce != r.nonce {
			return nil, nil
		}
		n := cur.clone()
		n.claimUntil = time.Time{}
		return n, nil
	})
	if err != nil {
		d.logError(ctx, "invoice reservation not released (it lapses with the lease)", r.ID(), err)
	}
}

// reservation returns a new record for q: a fresh ID and nonce, the
// request, and what is known before the service answers.
func reservation(q request, now time.Time) *Record {
	return &Record{
		Invoice: Invoice{
			ID: rand.Text(), OrderID: q.OrderID, Description: q.Description, Ticker: q.Ticker,
			Currency: q.Currency, Price: q.Price, Tolerance: q.Tolerance, MultiToken: q.MultiToken,
			QuoteTTL: q.QuoteTTL, MonitorFor: q.MonitorFor, CreatedAt: now, UpdatedAt: now,
		},
		nonce: rand.Text(),
		req:   q,
	}
}

// open asks the service for r's address: the coin's info (precision,
// name, price), then RequestPayment for the price at that quote. It
// returns the event that makes r an invoice. The same r (ID and nonce)
// gives the same address: the service binds a callback URL to its
// address for good. A reservation that offers several coins is opened by
// openChoice.
func (d *Desk) open(ctx context.Context, r *Record) (event, error) {
	q := &r.req
	if len(q.Tickers) > 0 {
		return d.openChoice(ctx, r)
	}
	_, places, rate, err := d.coinQuote(ctx, q.Ticker, q.Currency)
	if err != nil {
		return event{}, err
	}
	c, err := d.makeAddress(ctx, r, q.Ticker, q.Address, q.outputs(), ceilDiv(q.Price, rate, places), places)
	if err != nil {
		return event{}, err
	}
	return event{kind: evCreate, rate: rate, created: c}, nil
}

// coinQuote reads coin tk's info (read at once: a person is waiting),
// its precision and its price in currency (1 for a price in the coin).
func (d *Desk) coinQuote(ctx context.Context, tk, currency string) (*cryptapi.CoinInfo, int32, decimal.Decimal, error) {
	info, err := d.coinInfo(ctx, tk, true)
	if err != nil {
		return nil, 0, decimal.Zero, err
	}
	places, ok := info.Decimals()
	if !ok {
		return nil, 0, decimal.Zero, fmt.Errorf("%w (%s)", ErrPrecisionUnknown, tk)
	}
	rate := decimal.NewFromInt(1)
	if currency != "" {
		if rate, err = priceIn(info, currency); err != nil {
			return nil, 0, decimal.Zero, err
		}
	}
	return info, places, rate, nil
}

// makeAddress asks the service for r's address of coin tk, to address
// (or outs), with RequestPayment for amount in the coin, and returns what
// its answers give. The address is created with pending callbacks on and
// the callback URL of r's ID and nonce.
func (d *Desk) makeAddress(ctx context.Context, r *Record, tk, address string, outs []cryptapi.Output,
	amount decimal.Decimal, places int32) (*created, error) {
	q := &r.req
	info, err := d.coinInfo(ctx, tk, true)
	if err != nil {
		return nil, err
	}
	params := url.Values{ParamInvoice: {r.ID()}, ParamNonce: {r.nonce}}
	pr, err := d.c.RequestPayment(ctx, tk, &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{
			Callback:   q.Callback,
			Params:     params,
			Address:    address,
			Outputs:    outs,
			Pending:    true,
			MultiToken: q.MultiToken,
		},
		Amount: amount,
	})
	if err != nil {
		return nil, err
	}
	minimum := pr.Minimum
	if m := pr.Address.MinimumTransactionCoin; m.GreaterThan(minimum) {
		minimum = m
	}
	callbackURL := pr.Address.CallbackURL
	if callbackURL == "" {
		callbackURL, _ = cryptapi.CallbackURL(q.Callback, params)
	}
	t, _ := ticker.Parse(tk)
	return &created{
		nonce: r.nonce, addressIn: pr.Address.AddressIn, callbackURL: callbackURL,
		uri: makeURITemplate(pr.PaymentURI, pr.AmountCoin, places), minimum: minimum,
		decimals: places, coinName: info.Coin, network: t.Network,
	}, nil
}
