package invoice

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// Limits of the customer's choice of coin.
const (
	// MaxTickers bounds CreateOptions.Tickers.
	MaxTickers = 16
	// MaxChoices bounds how many times the customer may choose a coin on
	// one invoice (Desk.Choose, the payment page's picker), the first
	// choice included; a coin set by Create is not a choice. Whatever the
	// number of choices, an invoice makes at most one address per offered
	// coin.
	MaxChoices = 8
)

var (
	// ErrCoinNotOffered is returned by Choose for a coin the invoice does
	// not offer: not one of its Coins, or, for an invoice in one coin,
	// not its Ticker. Nothing was sent or stored.
	ErrCoinNotOffered = errors.New("invoice: the coin is not offered on this invoice")
	// ErrTooManyChoices is returned by Choose when the customer has chosen
	// a coin MaxChoices times on the invoice. Nothing was sent or stored.
	ErrTooManyChoices = errors.New("invoice: no more choices of coin on this invoice")
)

// CoinChoice is one coin an invoice offers (Invoice.Coins): how the
// service names it, its quote on the invoice, what it would ask in it,
// and, once the customer chose it, its payment address.
type CoinChoice struct {
	// Ticker is the coin in "trc20_usdt" form.
	Ticker string `json:"ticker"`
	// CoinName is the coin's display name as the service's info gives it
	// ("Tether USD (TRC-20)"); Network the token's network ("trc20"), ""
	// for a native coin.
	CoinName string `json:"coin_name"`
	Network  string `json:"network"`
	// Decimals is the coin's precision; Minimum the smallest payment the
	// service forwards, in the coin.
	Decimals int32           `json:"decimals"`
	Minimum  decimal.Decimal `json:"minimum"`
	// Rate is the price of one coin in the invoice's Currency, quoted at
	// the invoice's QuotedAt: every coin is quoted at once, when the
	// invoice is created, re-quoted or a coin is chosen. A payment in the
	// coin is valued at the rate in force when it is first seen.
	Rate decimal.Decimal `json:"rate"`
	// Due is what the invoice would ask in this coin now: the unpaid
	// remainder at Rate, rounded up to Decimals and raised to Minimum; 0
	// once nothing is due.
	Due decimal.Decimal `json:"due"`
	// AddressIn is the coin's payment address, "" until the customer
	// first chose the coin (at ChosenAt). Payments to it count whichever
	// coin was chosen last.
	AddressIn string    `json:"address_in,omitempty"`
	ChosenAt  time.Time `json:"chosen_at,omitzero"`
}

// coinWork is what the Desk keeps of an offered coin besides its
// CoinChoice: the service's callback URL and payment URI form for its
// address, and the claim of the Choose making that address.
type coinWork struct {
	Ticker      string      `json:"ticker"`
	CallbackURL string      `json:"callback_url,omitempty"`
	URI         uriTemplate `json:"uri"`
	// Owner and Until: the Choose that makes the address holds the coin
	// until then (see Desk.Choose).
	Owner string    `json:"owner,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

// checkCoins checks Tickers and Destinations and returns them in
// "trc20_usdt" form (nil for an invoice in one coin). tk is Ticker in
// that form ("" if not set), currency the price's currency.
func checkCoins(o *CreateOptions, tk, currency string, keyed bool) ([]string, map[string]string, error) {
	if len(o.Tickers) == 0 {
		if len(o.Destinations) > 0 {
			return nil, nil, invalid("Destinations", "set with Tickers; the destination of one coin is Address or Outputs")
		}
		return nil, nil, nil
	}
	if len(o.Tickers) > MaxTickers {
		return nil, nil, invalid("Tickers", "%d coins, at most %d", len(o.Tickers), MaxTickers)
	}
	tickers := make([]string, 0, len(o.Tickers))
	for i, s := range o.Tickers {
		t, err := ticker.Parse(strings.TrimSpace(s))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: Tickers: coin %d: %w", ErrInvalidOptions, i, cryptapi.ErrInvalidTicker)
		}
		if slices.Contains(tickers, t.Key()) {
			return nil, nil, invalid("Tickers", "%s twice", t.Key())
		}
		if strings.EqualFold(currency, t.Coin) || strings.EqualFold(currency, t.Key()) {
			return nil, nil, invalid("Currency", "a price offered in several coins is in a fiat currency, not in %s", t.Key())
		}
		tickers = append(tickers, t.Key())
	}
	switch {
	case tk != "" && !slices.Contains(tickers, tk):
		return nil, nil, invalid("Ticker", "%s is not one of Tickers", tk)
	case currency == "":
		return nil, nil, invalid("Currency", "required with Tickers: a price offered in several coins is in a fiat currency")
	case strings.TrimSpace(o.Address) != "" || len(o.Outputs) > 0:
		return nil, nil, invalid("Address", "Address and Outputs are the form for one coin: with Tickers, give each coin's destination in Destinations")
	}
	dests := make(map[string]string, len(o.Destinations))
	for _, k := range slices.Sorted(maps.Keys(o.Destinations)) {
		t, err := ticker.Parse(strings.TrimSpace(k))
		if err != nil || !slices.Contains(tickers, t.Key()) {
			return nil, nil, invalid("Destinations", "%q is not one of Tickers", k)
		}
		if _, twice := dests[t.Key()]; twice {
			return nil, nil, invalid("Destinations", "%s is given twice", t.Key())
		}
		a := strings.TrimSpace(o.Destinations[k])
		if a == "" {
			return nil, nil, fmt.Errorf("%w: Destinations: %s: %w", ErrInvalidOptions, t.Key(), cryptapi.ErrAddressRequired)
		}
		if err := checkCoinDestination(t.Key(), a); err != nil {
			return nil, nil, err
		}
		dests[t.Key()] = a
	}
	if !keyed {
		for _, t := range tickers {
			if dests[t] == "" {
				return nil, nil, fmt.Errorf("%w: Destinations: %s: %w", ErrInvalidOptions, t, cryptapi.ErrAddressRequired)
			}
		}
	}
	if len(dests) == 0 {
		dests = nil
	}
	return tickers, dests, nil
}

// checkCoinDestination refuses an address the client would refuse for
// coin tk (another network's, a mistyped one).
func checkCoinDestination(tk, addr string) error {
	if _, err := checkDestination(tk, addr, nil, true); err != nil {
		return fmt.Errorf("%w (Destinations: %s)", err, tk)
	}
	return nil
}

// coinIndex is the index of tk in inv.Coins, -1 if it is not offered.
func coinIndex(inv *Invoice, tk string) int {
	return slices.IndexFunc(inv.Coins, func(c CoinChoice) bool { return c.Ticker == tk })
}

// coinAt returns the offered coin whose address is addr, nil if none.
func coinAt(inv *Invoice, addr string) *CoinChoice {
	if addr == "" {
		return nil
	}
	for i := range inv.Coins {
		if inv.Coins[i].AddressIn == addr {
			return &inv.Coins[i]
		}
	}
	return nil
}

// coinOf returns the offered coin tk (compared as callbacks' coins
// are), nil if none.
func coinOf(inv *Invoice, tk string) *CoinChoice {
	for i := range inv.Coins {
		if callbackurl.EqualFoldASCII(inv.Coins[i].Ticker, tk) {
			return &inv.Coins[i]
		}
	}
	return nil
}

// ownsAddress reports whether addr is one of the invoice's payment
// addresses: its current one or one of a coin chosen before.
func (inv *Invoice) ownsAddress(addr string) bool {
	return addr != "" && (addr == inv.AddressIn || coinAt(inv, addr) != nil)
}

// tickerAt is the coin of the invoice's address addr.
func (inv *Invoice) tickerAt(addr string) string {
	if c := coinAt(inv, addr); c != nil {
		return c.Ticker
	}
	return inv.Ticker
}

// choices counts the customer's choices of coin on the invoice.
func choices(inv *Invoice) int {
	n := 0
	for _, ev := range inv.Events {
		if ev.Kind == EventCoinChosen {
			n++
		}
	}
	return n
}

// checkChoice refuses a choice of tk the invoice does not allow now.
func checkChoice(inv *Invoice, tk string) error {
	switch {
	case len(inv.Coins) == 0 && tk != inv.Ticker, len(inv.Coins) > 0 && coinIndex(inv, tk) < 0:
		return fmt.Errorf("%w: %s", ErrCoinNotOffered, tk)
	case inv.Status != StatusNew:
		return fmt.Errorf("%w: cannot choose a coin on a %s invoice", ErrWrongStatus, inv.Status)
	case tk == inv.Ticker:
		return nil
	case choices(inv) >= MaxChoices:
		return fmt.Errorf("%w: %d choices made", ErrTooManyChoices, MaxChoices)
	}
	return nil
}

// setRates gives every offered coin its rate of rates, and the invoice
// the rate of its coin. It refuses rates that do not quote every coin.
func setRates(n *Record, rates map[string]decimal.Decimal) error {
	inv := &n.Invoice
	for _, c := range inv.Coins {
		if !rates[c.Ticker].IsPositive() {
			return fmt.Errorf("%w: no positive rate of %s", errBadEvent, c.Ticker)
		}
	}
	for i := range inv.Coins {
		inv.Coins[i].Rate = rates[inv.Coins[i].Ticker]
		if inv.Coins[i].Ticker == inv.Ticker {
			inv.Rate = inv.Coins[i].Rate
		}
	}
	return nil
}

// ratesNote writes the coins' rates for an event.
func ratesNote(inv *Invoice) string {
	parts := make([]string, len(inv.Coins))
	for i, c := range inv.Coins {
		parts[i] = c.Ticker + " " + c.Rate.String()
	}
	return fmt.Sprintf("rates in %s: %s", inv.Currency, strings.Join(parts, ", "))
}

// fillCoins makes the offered coins of a reservation filled by c (its
// coin, if Create set one, has c's address).
func fillCoins(n *Record, c *created, at time.Time) {
	inv := &n.Invoice
	inv.Coins = append([]CoinChoice(nil), c.coins...)
	n.coins = make([]coinWork, len(inv.Coins))
	for i := range inv.Coins {
		n.coins[i].Ticker = inv.Coins[i].Ticker
		if c.addressIn != "" && inv.Coins[i].Ticker == inv.Ticker {
			inv.Coins[i].AddressIn, inv.Coins[i].ChosenAt, inv.Coins[i].Minimum = c.addressIn, at, c.minimum
			n.coins[i].CallbackURL, n.coins[i].URI = c.callbackURL, c.uri
		}
	}
}

// applyChoice applies evChoose to n, whose clock has been applied: the
// coin's address (made now, or before), the quotes of every coin, and
// the coin becomes the invoice's.
func applyChoice(n *Record, e event, at time.Time) error {
	inv := &n.Invoice
	if err := checkChoice(inv, e.ticker); err != nil {
		return err
	}
	if e.ticker == inv.Ticker {
		return nil // chosen already (a form sent twice, another replica)
	}
	i := coinIndex(inv, e.ticker)
	c, w := &inv.Coins[i], &n.coins[i]
	switch a := e.created; {
	case a == nil && c.AddressIn == "":
		return fmt.Errorf("%w: %s has no address yet", errBadEvent, e.ticker)
	case a == nil:
	case c.AddressIn == "" && inv.ownsAddress(a.addressIn):
		return fmt.Errorf("invoice: choose: the service gave %s the address of another coin of the invoice", e.ticker)
	case c.AddressIn == "":
		c.AddressIn, c.ChosenAt, c.Minimum = a.addressIn, at, a.minimum
		w.CallbackURL, w.URI = a.callbackURL, a.uri
	case c.AddressIn != a.addressIn:
		return fmt.Errorf("invoice: choose: the service gave %s another address than before", e.ticker)
	}
	w.Owner, w.Until = "", time.Time{}
	prev := inv.Ticker
	inv.Ticker = c.Ticker
	if err := setRates(n, e.rates); err != nil {
		return err
	}
	inv.AddressIn, inv.CoinName, inv.Network, inv.Decimals, inv.Minimum = c.AddressIn, c.CoinName, c.Network, c.Decimals, c.Minimum
	inv.QuotedAt, inv.QuoteExpiresAt = at, quoteEnd(at, inv.QuoteTTL.Duration, inv.ExpiresAt)
	n.uri, n.callbackURL = w.URI, w.CallbackURL
	settle(n)
	note := fmt.Sprintf("%s chosen: %s %s due at %s %s per %s", inv.Ticker, inv.Due, inv.Ticker, inv.Rate, inv.Currency, inv.Ticker)
	if prev != "" {
		note = fmt.Sprintf("%s chosen instead of %s: %s %s due at %s %s per %s; payments to the %s address still count",
			inv.Ticker, prev, inv.Due, inv.Ticker, inv.Rate, inv.Currency, inv.Ticker, prev)
	}
	addEvent(inv, at, EventCoinChosen, note)
	return nil
}

// errCoinClaimed means another Choose is making the coin's address;
// errAddressMade that the address exists now.
var (
	errCoinClaimed = errors.New("invoice: choose: the coin's address is being made")
	errAddressMade = errors.New("invoice: choose: the coin's address exists")
)

// Choose makes coin ("ltc", "trc20_usdt" or "trc20/usdt"), one of the
// invoice's Coins, the coin it is paid in, as the customer chose it on
// the payment page (the page calls it; a shop's own checkout may too).
// The first time a coin is chosen its address is created, for that coin
// only; every coin is quoted again (the price is read from the service),
// and Due, PaymentURI, AddressIn and the rest are the coin's. The
// customer may switch coin while the invoice waits for payment, also
// after a partial payment: each switch is a new address (or the one made
// before for that coin), and payments to the addresses of the coins
// chosen before still count, each at its coin's quote. Choosing the
// invoice's coin again changes nothing.
//
// Refused before anything is sent or stored: a coin the invoice does not
// offer (ErrCoinNotOffered), an invoice that does not wait for payment
// (processing, settled, expired, invalid: ErrWrongStatus; a passed
// deadline counts), and a choice beyond MaxChoices (ErrTooManyChoices).
// An unknown invoice is ErrNotFound.
//
// Choices of one invoice racing on any number of replicas make one
// address per coin, with one call to the service: the first claims the
// coin under the store's lock while it asks the service, the others wait
// for its address (or take over when its claim lapses, see WithLease;
// the service gives the same callback URL the same address). The change
// is passed to onChange; when onChange fails, Choose returns the stored
// invoice with an error wrapping ErrNotNotified, and Tick offers the
// change again.
func (d *Desk) Choose(ctx context.Context, id, coin string) (*Invoice, error) {
	t, err := ticker.Parse(strings.TrimSpace(coin))
	if err != nil {
		return nil, fmt.Errorf("%w: not a ticker", ErrCoinNotOffered)
	}
	tk := t.Key()
	wait := 20 * time.Millisecond
	for range 10000 {
		r, err := d.load(ctx, id)
		if err != nil {
			return nil, err
		}
		inv := r.Invoice.AsOf(d.now())
		if err := checkChoice(inv, tk); err != nil {
			return nil, err
		}
		if inv.Ticker == tk {
			return r.Invoice.Clone(), nil
		}
		if inv.Coins[coinIndex(inv, tk)].AddressIn != "" {
			_, rates, err := d.quotes(ctx, inv, true)
			if err != nil {
				return nil, err
			}
			return d.change(ctx, id, event{kind: evChoose, ticker: tk, rates: rates})
		}
		owner, err := d.claimCoin(ctx, id, tk)
		switch {
		case errors.Is(err, errAddressMade):
			continue
		case errors.Is(err, errCoinClaimed):
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			wait = min(2*wait, 500*time.Millisecond)
			continue
		case err != nil:
			return nil, err
		}
		e, err := d.openCoin(ctx, r, tk)
		if err != nil {
			d.releaseCoin(ctx, id, tk, owner)
			return nil, err
		}
		n, err := d.change(ctx, id, e)
		if err != nil && !errors.Is(err, ErrNotNotified) {
			// The address exists but is not stored (the invoice was paid
			// or ended meanwhile, or the store failed): it was never
			// shown, and a later choice of the coin gets it again.
			d.releaseCoin(ctx, id, tk, owner)
		}
		return n, err
	}
	return nil, fmt.Errorf("invoice: choose: the address of %s on invoice %s is never made", tk, id)
}

// claimCoin claims the making of coin tk's address on invoice id for
// the Desk's lease, under the store's lock, and returns the claim's
// owner. The claim is the Desk's bookkeeping, not a change: the
// invoice's version stays.
func (d *Desk) claimCoin(ctx context.Context, id, tk string) (string, error) {
	owner := rand.Text()
	_, err := d.store.Update(ctx, id, "", func(cur *Record) (*Record, error) {
		i := coinIndex(&cur.Invoice, tk)
		switch {
		case i < 0:
			return nil, fmt.Errorf("%w: %s", ErrCoinNotOffered, tk)
		case cur.Invoice.Coins[i].AddressIn != "":
			return nil, errAddressMade
		case cur.coins[i].Owner != "" && d.now().Before(cur.coins[i].Until):
			return nil, errCoinClaimed
		}
		n := cur.clone()
		n.coins[i].Owner, n.coins[i].Until = owner, d.now().Add(d.lease)
		return n, nil
	})
	return owner, err
}

// releaseCoin gives up owner's claim on coin tk when its Choose failed,
// so that the next choice of the coin need not wait for it to lapse.
func (d *Desk) releaseCoin(ctx context.Context, id, tk, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := d.store.Update(ctx, id, "", func(cur *Record) (*Record, error) {
		i := coinIndex(&cur.Invoice, tk)
		if i < 0 || cur.coins[i].Owner != owner {
			return nil, nil
		}
		n := cur.clone()
		n.coins[i].Owner, n.coins[i].Until = "", time.Time{}
		return n, nil
	})
	if err != nil {
		d.logError(ctx, "invoice coin claim not released (it lapses with the lease)", id, err)
	}
}

// quotes reads the price of the invoice's coin in its currency, and, for
// an invoice with Coins, of every offered coin (rates; rate is then the
// chosen coin's, 0 before a choice). See coinInfo for force.
func (d *Desk) quotes(ctx context.Context, inv *Invoice, force bool) (decimal.Decimal, map[string]decimal.Decimal, error) {
	if len(inv.Coins) == 0 {
		rate, err := d.rate(ctx, inv.Ticker, inv.Currency, force)
		return rate, nil, err
	}
	rates := make(map[string]decimal.Decimal, len(inv.Coins))
	for _, c := range inv.Coins {
		rate, err := d.rate(ctx, c.Ticker, inv.Currency, force)
		if err != nil {
			return decimal.Zero, nil, err
		}
		rates[c.Ticker] = rate
	}
	return rates[inv.Ticker], rates, nil
}

// openChoice reads the info and price of every coin a reservation
// offers, refuses a coin whose minimum is above the price, and, when
// Create set a coin, makes its address. It returns the event that makes
// the reservation an invoice.
func (d *Desk) openChoice(ctx context.Context, r *Record) (event, error) {
	q := &r.req
	coins := make([]CoinChoice, len(q.Tickers))
	for i, tk := range q.Tickers {
		info, places, rate, err := d.coinQuote(ctx, tk, q.Currency)
		if err != nil {
			return event{}, err
		}
		minimum := cryptapi.EffectiveMinimum(info.MinimumTransactionCoin, 1).RoundUp(places)
		if !minimum.IsPositive() {
			return event{}, fmt.Errorf("%w (%s)", cryptapi.ErrMinimumUnknown, tk)
		}
		if amount := ceilDiv(q.Price, rate, places); amount.LessThan(minimum) {
			return event{}, &cryptapi.BelowMinimumError{Ticker: tk, Amount: amount, Minimum: minimum}
		}
		t, _ := ticker.Parse(tk)
		coins[i] = CoinChoice{Ticker: tk, CoinName: info.Coin, Network: t.Network, Decimals: places, Minimum: minimum, Rate: rate}
	}
	e := event{kind: evCreate, created: &created{nonce: r.nonce, coins: coins}}
	if q.Ticker == "" {
		return e, nil
	}
	c := coins[slices.Index(q.Tickers, q.Ticker)]
	a, err := d.makeAddress(ctx, r, q.Ticker, q.Destinations[q.Ticker], nil, ceilDiv(q.Price, c.Rate, c.Decimals), c.Decimals)
	if err != nil {
		return event{}, err
	}
	a.nonce, a.coins = r.nonce, coins
	return event{kind: evCreate, rate: c.Rate, created: a}, nil
}

// openCoin makes the address of coin tk of invoice r, asking for the
// unpaid remainder at the coin's price read now, and returns the event
// that chooses it, with every coin quoted again.
func (d *Desk) openCoin(ctx context.Context, r *Record, tk string) (event, error) {
	inv := &r.Invoice
	_, rates, err := d.quotes(ctx, inv, true)
	if err != nil {
		return event{}, err
	}
	c := inv.Coins[coinIndex(inv, tk)]
	amount := asked(inv.Remaining, rates[tk], c.Decimals, c.Minimum)
	a, err := d.makeAddress(ctx, r, tk, r.req.Destinations[tk], nil, amount, c.Decimals)
	if err != nil {
		return event{}, err
	}
	return event{kind: evChoose, ticker: tk, rates: rates, created: a}, nil
}

// sameCoins reports whether two invoices are in the same coin, to the
// same address, with the same offered coins, quotes and addresses.
func sameCoins(a, b *Invoice) bool {
	if a.Ticker != b.Ticker || a.AddressIn != b.AddressIn || len(a.Coins) != len(b.Coins) {
		return false
	}
	for i := range a.Coins {
		x, y := a.Coins[i], b.Coins[i]
		if x.Ticker != y.Ticker || x.AddressIn != y.AddressIn || !x.Rate.Equal(y.Rate) || !x.Due.Equal(y.Due) ||
			!x.Minimum.Equal(y.Minimum) || !x.ChosenAt.Equal(y.ChosenAt) {
			return false
		}
	}
	return true
}
