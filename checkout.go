package cryptapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// MinCheckoutExpiry is how far ahead of its arrival at the service a
// checkout expiry must be.
const MinCheckoutExpiry = time.Hour

// CheckoutExpiryMargin is added to MinCheckoutExpiry when an expiry is
// checked before sending: a request takes time to arrive, and an expiry
// exactly one hour ahead when sent is under an hour when it arrives, so the
// service refuses it.
const CheckoutExpiryMargin = 2 * time.Minute

// CheckoutOptions are the parameters of CreateCheckout.
type CheckoutOptions struct {
	// RedirectURL is where the customer is sent after paying. Required.
	// Custom data can ride in its query, as with callback URLs.
	RedirectURL string `url:"redirect_url"`
	// NotifyURL receives the payment notification (IPN) when paid.
	NotifyURL string `url:"notify_url,omitempty"`
	// Value is the order value in Currency. Required, positive.
	Value decimal.Decimal `url:"-"`
	// Currency is the fiat currency of Value ("usd", "eur"); empty means
	// the one set in the dashboard's payment settings.
	Currency string `url:"currency,omitempty"`
	// ItemDescription is shown on the checkout page.
	ItemDescription string `url:"item_description,omitempty"`
	// ExpireAt is when the payment expires. It must be at least
	// MinCheckoutExpiry plus CheckoutExpiryMargin ahead when the request is
	// sent (ErrExpireTooSoon otherwise); zero means never. Prefer ExpiresIn.
	ExpireAt time.Time `url:"-"`
	// ExpiresIn makes the payment expire this long after the request is
	// sent; the time is computed at sending. A duration of at least
	// MinCheckoutExpiry is sent as at least MinCheckoutExpiry plus
	// CheckoutExpiryMargin, so that it is still an hour when it arrives.
	// Shorter is refused (ErrExpireTooSoon). Set ExpireAt or ExpiresIn, not
	// both; zero means never.
	ExpiresIn time.Duration `url:"-"`
	// Post makes the IPN a POST instead of a GET.
	Post bool `url:"post,int,omitempty"`
}

// expireAt returns the expiry to send at now: the zero time for none. An
// expiry is sent in whole seconds, rounded up, and never less than
// MinCheckoutExpiry plus CheckoutExpiryMargin ahead of now.
func (o *CheckoutOptions) expireAt(now time.Time) (time.Time, error) {
	min := now.Add(MinCheckoutExpiry + CheckoutExpiryMargin)
	switch {
	case !o.ExpireAt.IsZero() && o.ExpiresIn != 0:
		return time.Time{}, fmt.Errorf("%w: set ExpireAt or ExpiresIn, not both", ErrInvalidOption)
	case o.ExpiresIn != 0:
		if o.ExpiresIn < MinCheckoutExpiry {
			return time.Time{}, ErrExpireTooSoon
		}
		t := now.Add(o.ExpiresIn)
		if t.Before(min) {
			t = min
		}
		return ceilSecond(t), nil
	case !o.ExpireAt.IsZero():
		if o.ExpireAt.Before(min) {
			return time.Time{}, ErrExpireTooSoon
		}
		return ceilSecond(o.ExpireAt), nil
	}
	return time.Time{}, nil
}

// ceilSecond rounds t up to a whole second, so that epoch seconds never
// move an expiry earlier.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// Checkout is the answer of CreateCheckout. SuccessToken is a secret known
// only to the merchant's systems: String and Format leave it out, whether
// a Checkout or a *Checkout is printed.
type Checkout struct {
	// PaymentURL is the hosted payment page to send the customer to.
	PaymentURL string
	// PaymentID identifies the payment for CheckoutLogs.
	PaymentID string
	// SuccessToken is echoed in the IPN; compare it to confirm the order
	// was paid. Store it with the order; never show it to the customer.
	SuccessToken string
	// Status is "success".
	Status string
}

// String describes the checkout without its success token.
func (c Checkout) String() string {
	return fmt.Sprintf("cryptapi.Checkout{PaymentURL: %q, PaymentID: %q, SuccessToken: %s, Status: %q}",
		c.PaymentURL, c.PaymentID, redacted, c.Status)
}

// Format implements fmt.Formatter so that no verb prints the token.
func (c Checkout) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// UnmarshalJSON decodes the checkout answer.
func (c *Checkout) UnmarshalJSON(b []byte) error {
	var w hostedPage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Checkout{PaymentURL: string(w.PaymentURL), PaymentID: string(w.PaymentID), SuccessToken: string(w.SuccessToken), Status: string(w.Status)}
	return nil
}

func (c *Checkout) apiStatus() string { return c.Status }

type hostedPage struct {
	PaymentURL   wire.String `json:"payment_url"`
	PaymentID    wire.String `json:"payment_id"`
	SuccessToken wire.String `json:"success_token"`
	Status       wire.String `json:"status"`
}

// CreateCheckout creates a hosted checkout payment for a fixed order
// value. It needs an API key in both forms and goes out at most once, like
// a payout: when the error matches ErrOutcomeUnknown, look the payment up
// before creating another.
func (c *Client) CreateCheckout(ctx context.Context, o *CheckoutOptions) (*Checkout, error) {
	if c.apiKey == "" {
		return nil, ErrAPIKeyRequired
	}
	if o == nil || strings.TrimSpace(o.RedirectURL) == "" {
		return nil, fmt.Errorf("%w: redirect URL is required", ErrInvalidOption)
	}
	if _, err := CallbackURL(o.RedirectURL, nil); err != nil {
		return nil, fmt.Errorf("%w: redirect URL must be an absolute http(s) URL", ErrInvalidOption)
	}
	if o.NotifyURL != "" {
		if _, err := CallbackURL(o.NotifyURL, nil); err != nil {
			return nil, fmt.Errorf("%w: notify URL must be an absolute http(s) URL", ErrInvalidOption)
		}
	}
	if !o.Value.IsPositive() {
		return nil, ErrInvalidValue
	}
	if o.Currency != "" && !validCode(o.Currency) {
		return nil, fmt.Errorf("%w: currency must be a currency code", ErrInvalidOption)
	}
	q := url.Values{"value": {o.Value.String()}}
	expire, err := o.expireAt(c.now())
	if err != nil {
		return nil, err
	}
	if !expire.IsZero() {
		q.Set("expire_at", strconv.FormatInt(expire.Unix(), 10))
	}
	return call[Checkout](ctx, c, &request{op: "checkout", path: "checkout/request/", opts: o, query: q, needKey: true})
}

// DepositOptions are the parameters of CreateDeposit.
type DepositOptions struct {
	// NotifyURL receives the notification (IPN) of each deposit. Required.
	NotifyURL string `url:"notify_url"`
	// ItemDescription is shown on the deposit page.
	ItemDescription string `url:"item_description,omitempty"`
	// Post makes the IPN a POST instead of a GET.
	Post bool `url:"post,int,omitempty"`
}

// Deposit is the answer of CreateDeposit.
type Deposit struct {
	// PaymentURL is the hosted deposit page.
	PaymentURL string
	// PaymentID identifies the deposit for DepositLogs.
	PaymentID string
	// Status is "success".
	Status string
}

// UnmarshalJSON decodes the deposit answer.
func (d *Deposit) UnmarshalJSON(b []byte) error {
	var w hostedPage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*d = Deposit{PaymentURL: string(w.PaymentURL), PaymentID: string(w.PaymentID), Status: string(w.Status)}
	return nil
}

func (d *Deposit) apiStatus() string { return d.Status }

// CreateDeposit creates a hosted deposit page that accepts any amount. It
// needs an API key in both forms and goes out at most once; an unknown
// outcome is reported as ErrOutcomeUnknown.
func (c *Client) CreateDeposit(ctx context.Context, o *DepositOptions) (*Deposit, error) {
	if c.apiKey == "" {
		return nil, ErrAPIKeyRequired
	}
	if o == nil || strings.TrimSpace(o.NotifyURL) == "" {
		return nil, fmt.Errorf("%w: notify URL is required", ErrInvalidOption)
	}
	if _, err := CallbackURL(o.NotifyURL, nil); err != nil {
		return nil, fmt.Errorf("%w: notify URL must be an absolute http(s) URL", ErrInvalidOption)
	}
	return call[Deposit](ctx, c, &request{op: "deposit", path: "deposit/request/", opts: o, needKey: true})
}

// CheckoutLogs is the answer of CheckoutLogs: the state of a checkout
// payment and the notifications sent for it, in the shape the API-key
// service publishes (is_paid, is_pending, is_expired, is_partial,
// payment_data, notifications). The flags are read from booleans and from
// their "0"/"1" text. The older flat fields (paid_amount, paid_coin, a
// comma-separated txid) are read too where an answer carries them; fields
// an answer does not send stay zero, and Raw keeps the whole answer.
type CheckoutLogs struct {
	// Status is the service's status field, "success" for an answer.
	Status string
	// PaymentURL is the hosted page the customer pays on.
	PaymentURL string
	// IsPaid tells whether the order value was paid in full.
	IsPaid bool
	// IsPending tells whether a payment was seen and awaits confirmation.
	IsPending bool
	// IsExpired tells whether the payment expired before it was paid.
	IsExpired bool
	// IsPartial tells whether less than the order value has been paid.
	IsPartial bool
	// PaymentData has one entry per coin: what is due, paid and
	// outstanding in that coin.
	PaymentData []CheckoutPaymentData
	// Value is the order value, in Currency, where the answer carries it.
	Value decimal.Decimal
	// Currency is the fiat currency of Value, e.g. "USD".
	Currency string
	// PaidAmount is what was paid, in PaidCoin (older flat shape).
	PaidAmount decimal.Decimal
	// PaidCoin is the coin the customer paid with (older flat shape).
	PaidCoin string
	// ExchangeRate is the rate of the payment (older flat shape).
	ExchangeRate decimal.Decimal
	// TxIDs are the payment's transaction hashes: the flat txid field, or
	// those of every PaymentData entry.
	TxIDs []string
	// Notifications are the IPN deliveries to the notify URL.
	Notifications []Notification
	// Raw is the whole answer, for fields the SDK does not model.
	Raw json.RawMessage
}

// CheckoutPaymentData is what a checkout payment asks and has received in
// one coin.
type CheckoutPaymentData struct {
	// Coin is the ticker, "btc" or "trc20_usdt".
	Coin string
	// Value is the order value in Coin.
	Value decimal.Decimal
	// ValuePaid is what was received in Coin.
	ValuePaid decimal.Decimal
	// ValueOutstanding is what is still due in Coin.
	ValueOutstanding decimal.Decimal
	// ExchangeRate is the coin's rate against the order's currency.
	ExchangeRate decimal.Decimal
	// TxIDs are the transactions received in Coin.
	TxIDs []string
}

// UnmarshalJSON decodes one payment_data entry.
func (d *CheckoutPaymentData) UnmarshalJSON(b []byte) error {
	var w struct {
		Coin             wire.String     `json:"coin"`
		Value            wire.Amount     `json:"value"`
		ValuePaid        wire.Amount     `json:"value_paid"`
		ValueOutstanding wire.Amount     `json:"value_outstanding"`
		ExchangeRate     wire.Amount     `json:"exchange_rate"`
		TxID             json.RawMessage `json:"txid"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	ids, err := txidList(w.TxID)
	if err != nil {
		return err
	}
	*d = CheckoutPaymentData{
		Coin: string(w.Coin), Value: w.Value.D(), ValuePaid: w.ValuePaid.D(),
		ValueOutstanding: w.ValueOutstanding.D(), ExchangeRate: w.ExchangeRate.D(), TxIDs: ids,
	}
	return nil
}

// txidList reads a txid field sent as a list of hashes or as one
// comma-separated text.
func txidList(raw json.RawMessage) ([]string, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var items []wire.String
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var out []string
		for _, it := range items {
			out = append(out, SplitTxIDs(string(it))...)
		}
		return out, nil
	}
	s, err := wire.DecodeString(raw)
	if err != nil {
		return nil, err
	}
	return SplitTxIDs(s), nil
}

// stateFlag is a checkout state flag: true/false, 1/0 and their text, and the
// "done"/"paid" text older answers use for is_paid; other text is false.
type stateFlag bool

func (f *stateFlag) UnmarshalJSON(b []byte) error {
	s, err := wire.DecodeString(b)
	if err != nil {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "done", "paid":
		*f = true
		return nil
	}
	// Text the SDK does not know ("pending", "expired") reads as false.
	v, _ := wire.ParseBool(s)
	*f = stateFlag(v)
	return nil
}

// Paid reports whether the order value was paid in full (IsPaid).
func (l *CheckoutLogs) Paid() bool { return l.IsPaid }

// UnmarshalJSON decodes checkout logs.
func (l *CheckoutLogs) UnmarshalJSON(b []byte) error {
	var w struct {
		Status        wire.String           `json:"status"`
		PaymentURL    wire.String           `json:"payment_url"`
		IsPaid        stateFlag             `json:"is_paid"`
		IsPending     stateFlag             `json:"is_pending"`
		IsExpired     stateFlag             `json:"is_expired"`
		IsPartial     stateFlag             `json:"is_partial"`
		PaymentData   []CheckoutPaymentData `json:"payment_data"`
		Value         wire.Amount           `json:"value"`
		Currency      wire.String           `json:"currency"`
		PaidAmount    wire.Amount           `json:"paid_amount"`
		PaidCoin      wire.String           `json:"paid_coin"`
		ExchangeRate  wire.Amount           `json:"exchange_rate"`
		TxID          json.RawMessage       `json:"txid"`
		Notifications []Notification        `json:"notifications"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	ids, err := txidList(w.TxID)
	if err != nil {
		return err
	}
	if ids == nil {
		for _, d := range w.PaymentData {
			ids = append(ids, d.TxIDs...)
		}
	}
	*l = CheckoutLogs{
		Status: string(w.Status), PaymentURL: string(w.PaymentURL),
		IsPaid: bool(w.IsPaid), IsPending: bool(w.IsPending), IsExpired: bool(w.IsExpired), IsPartial: bool(w.IsPartial),
		PaymentData: w.PaymentData, Value: w.Value.D(), Currency: string(w.Currency), PaidAmount: w.PaidAmount.D(),
		PaidCoin: string(w.PaidCoin), ExchangeRate: w.ExchangeRate.D(), TxIDs: ids,
		Notifications: w.Notifications, Raw: append(json.RawMessage(nil), b...),
	}
	return nil
}

func (l *CheckoutLogs) apiStatus() string { return l.Status }

// DepositLogs is the answer of DepositLogs: the deposits made on a deposit
// page, their total, and the notifications sent.
type DepositLogs struct {
	// Status is the service's status field, "success" for an answer.
	Status string
	// PaymentURL is the hosted deposit page.
	PaymentURL string
	// Deposits are the deposits made, oldest first.
	Deposits []DepositEntry
	// TotalDeposited is the sum of the deposits, in Currency.
	TotalDeposited decimal.Decimal
	// Currency is the currency of TotalDeposited, as the service writes it
	// ("USDT", "usd").
	Currency string
	// Notifications are the IPN deliveries to the notify URL.
	Notifications []Notification
	// Raw is the whole answer, for fields the SDK does not model.
	Raw json.RawMessage
}

// DepositEntry is one deposit. The service does not publish this record;
// these are the fields its answers carry, and Raw keeps the record.
type DepositEntry struct {
	// TxIDs are the deposit's transactions.
	TxIDs []string
	// Coin is the ticker paid with.
	Coin string
	// Amount is the amount received, in Coin.
	Amount decimal.Decimal
	// Value is the amount's value in the page's currency.
	Value decimal.Decimal
	// ExchangeRate is the coin's rate at payment time.
	ExchangeRate decimal.Decimal
	// Address is the address that received the deposit.
	Address string
	// Timestamp is when the deposit was received, read as UTC.
	Timestamp time.Time
	// Raw is the record as sent.
	Raw json.RawMessage
}

// UnmarshalJSON decodes one deposit.
func (d *DepositEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		TxID         json.RawMessage `json:"txid"`
		Coin         wire.String     `json:"coin"`
		PaidCoin     wire.String     `json:"paid_coin"`
		Amount       wire.Amount     `json:"value_coin"`
		PaidAmount   wire.Amount     `json:"paid_amount"`
		Value        wire.Amount     `json:"value"`
		ExchangeRate wire.Amount     `json:"exchange_rate"`
		Address      wire.String     `json:"address"`
		Timestamp    wire.Time       `json:"timestamp"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	ids, err := txidList(w.TxID)
	if err != nil {
		return err
	}
	*d = DepositEntry{
		TxIDs: ids, Coin: string(w.Coin), Amount: w.Amount.D(), Value: w.Value.D(),
		ExchangeRate: w.ExchangeRate.D(), Address: string(w.Address), Timestamp: w.Timestamp.T(),
		Raw: append(json.RawMessage(nil), b...),
	}
	if d.Coin == "" {
		d.Coin = string(w.PaidCoin)
	}
	if d.Amount.IsZero() {
		d.Amount = w.PaidAmount.D()
	}
	return nil
}

// UnmarshalJSON decodes deposit logs.
func (l *DepositLogs) UnmarshalJSON(b []byte) error {
	var w struct {
		Status         wire.String    `json:"status"`
		PaymentURL     wire.String    `json:"payment_url"`
		Deposits       []DepositEntry `json:"deposits"`
		TotalDeposited wire.Amount    `json:"total_deposited"`
		Currency       wire.String    `json:"currency"`
		Notifications  []Notification `json:"notifications"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*l = DepositLogs{
		Status: string(w.Status), PaymentURL: string(w.PaymentURL), Deposits: w.Deposits,
		TotalDeposited: w.TotalDeposited.D(), Currency: string(w.Currency),
		Notifications: w.Notifications, Raw: append(json.RawMessage(nil), b...),
	}
	return nil
}

func (l *DepositLogs) apiStatus() string { return l.Status }

// Notification is one IPN delivery attempt.
type Notification struct {
	// RequestURL is the notify URL as it was called.
	RequestURL string
	// Responses is what the merchant's server answered.
	Responses string
	// ResponseStatus is the HTTP status the merchant's server returned.
	ResponseStatus string
	// Timestamp is when the attempt was made.
	Timestamp time.Time
	// NextTry is when the service will try again; zero when none is planned.
	NextTry time.Time
}

// UnmarshalJSON decodes a notification.
func (n *Notification) UnmarshalJSON(b []byte) error {
	var w struct {
		RequestURL     wire.String `json:"request_url"`
		Responses      wire.String `json:"responses"`
		Response       wire.String `json:"response"`
		ResponseStatus wire.String `json:"response_status"`
		Timestamp      wire.Time   `json:"timestamp"`
		LastUpdate     wire.Time   `json:"last_update"`
		NextTry        wire.Time   `json:"next_try"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*n = Notification{RequestURL: string(w.RequestURL), Responses: string(w.Responses), ResponseStatus: string(w.ResponseStatus), Timestamp: w.Timestamp.T(), NextTry: w.NextTry.T()}
	if n.Responses == "" {
		n.Responses = string(w.Response)
	}
	if n.Timestamp.IsZero() {
		n.Timestamp = w.LastUpdate.T()
	}
	return nil
}

// SplitTxIDs splits the service's comma-separated transaction hashes.
func SplitTxIDs(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// CheckoutLogs returns the state and notifications of a checkout payment.
func (c *Client) CheckoutLogs(ctx context.Context, paymentID string) (*CheckoutLogs, error) {
	return hostedLogs[CheckoutLogs](ctx, c, "checkout", paymentID)
}

// DepositLogs returns the deposits and notifications of a deposit page.
func (c *Client) DepositLogs(ctx context.Context, paymentID string) (*DepositLogs, error) {
	return hostedLogs[DepositLogs](ctx, c, "deposit", paymentID)
}

func hostedLogs[T any](ctx context.Context, c *Client, kind, id string) (*T, error) {
	if c.apiKey == "" {
		return nil, ErrAPIKeyRequired
	}
	if !validCode(id) && !validToken(id) {
		return nil, fmt.Errorf("%w: payment id is required", ErrInvalidOption)
	}
	return call[T](ctx, c, &request{
		op:      kind + " logs",
		path:    kind + "/logs/",
		query:   url.Values{"token": {id}},
		retry:   true,
		needKey: true,
	})
}

// validToken accepts opaque identifiers: printable ASCII without spaces,
// at most 128 characters.
func validToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
