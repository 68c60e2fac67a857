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

// MinCheckoutExpiry is how far ahead a checkout expiry must be.
const MinCheckoutExpiry = time.Hour

// CheckoutOptions are the parameters of CreateCheckout.
type CheckoutOptions struct {
	// RedirectURL is where the customer is sent after paying. Required.
	// Custom data can ride in its query, as with callback URLs.
	RedirectURL string `url:"redirect_url"`
	// NotifyURL receives the payment notification (IPN) when paid.
	NotifyURL string `url:"notify_url,omitempty"`
	// Value is the order value in the fiat currency set in the dashboard.
	// Required, positive.
	Value decimal.Decimal `url:"-"`
	// ItemDescription is shown on the checkout page.
	ItemDescription string `url:"item_description,omitempty"`
	// ExpireAt is when the payment expires, at least MinCheckoutExpiry
	// ahead; zero means never.
	ExpireAt time.Time `url:"-"`
	// Post makes the IPN a POST instead of a GET.
	Post bool `url:"post,int,omitempty"`
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

type hostedPage struct {
	PaymentURL   wire.String `json:"payment_url"`
	PaymentID    wire.String `json:"payment_id"`
	SuccessToken wire.String `json:"success_token"`
	Status       wire.String `json:"status"`
}

// CreateCheckout creates a hosted checkout payment for a fixed order
// value. It needs an API key in both forms and is never retried
// automatically: after a transport error, look the payment up before
// creating another.
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
	q := url.Values{"value": {o.Value.String()}}
	if !o.ExpireAt.IsZero() {
		if o.ExpireAt.Before(c.now().Add(MinCheckoutExpiry)) {
			return nil, ErrExpireTooSoon
		}
		q.Set("expire_at", strconv.FormatInt(o.ExpireAt.Unix(), 10))
	}
	var out Checkout
	err := c.do(ctx, &request{op: "checkout", path: "checkout/request/", opts: o, query: q, needKey: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
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

// CreateDeposit creates a hosted deposit page that accepts any amount. It
// needs an API key in both forms and is never retried automatically.
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
	var out Deposit
	err := c.do(ctx, &request{op: "deposit", path: "deposit/request/", opts: o, needKey: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckoutLogs is the answer of CheckoutLogs and DepositLogs: the state of
// a hosted payment and the notifications sent for it. The service does not
// document this shape fully; fields it does not send stay zero, and Raw
// keeps the whole answer.
type CheckoutLogs struct {
	Status     string
	PaymentURL string
	// IsPaid is the payment state text ("1"/"done" when paid).
	IsPaid string
	// Value and Currency are the order value and its fiat currency.
	Value    decimal.Decimal
	Currency string
	// PaidAmount is what was paid, in PaidCoin.
	PaidAmount   decimal.Decimal
	PaidCoin     string
	ExchangeRate decimal.Decimal
	// TxIDs are the payment's transaction hashes.
	TxIDs []string
	// Notifications are the IPN deliveries to the notify URL.
	Notifications []Notification
	// Raw is the whole answer, for fields the SDK does not model.
	Raw json.RawMessage
}

// DepositLogs has the shape of CheckoutLogs.
type DepositLogs = CheckoutLogs

// Paid reports whether the payment state says paid.
func (l *CheckoutLogs) Paid() bool {
	v, err := wire.ParseBool(l.IsPaid)
	return (err == nil && v) || strings.EqualFold(l.IsPaid, "done") || strings.EqualFold(l.IsPaid, "paid")
}

// Notification is one IPN delivery attempt.
type Notification struct {
	RequestURL     string
	Responses      string
	ResponseStatus string
	Timestamp      time.Time
	NextTry        time.Time
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

// UnmarshalJSON decodes checkout and deposit logs.
func (l *CheckoutLogs) UnmarshalJSON(b []byte) error {
	var w struct {
		Status        wire.String    `json:"status"`
		PaymentURL    wire.String    `json:"payment_url"`
		IsPaid        wire.String    `json:"is_paid"`
		Value         wire.Amount    `json:"value"`
		Currency      wire.String    `json:"currency"`
		PaidAmount    wire.Amount    `json:"paid_amount"`
		PaidCoin      wire.String    `json:"paid_coin"`
		ExchangeRate  wire.Amount    `json:"exchange_rate"`
		TxID          wire.String    `json:"txid"`
		Notifications []Notification `json:"notifications"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*l = CheckoutLogs{
		Status: string(w.Status), PaymentURL: string(w.PaymentURL), IsPaid: string(w.IsPaid),
		Value: w.Value.D(), Currency: string(w.Currency), PaidAmount: w.PaidAmount.D(),
		PaidCoin: string(w.PaidCoin), ExchangeRate: w.ExchangeRate.D(), TxIDs: SplitTxIDs(string(w.TxID)),
		Notifications: w.Notifications, Raw: append(json.RawMessage(nil), b...),
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
	return c.hostedLogs(ctx, "checkout", paymentID)
}

// DepositLogs returns the state and notifications of a deposit page.
func (c *Client) DepositLogs(ctx context.Context, paymentID string) (*DepositLogs, error) {
	return c.hostedLogs(ctx, "deposit", paymentID)
}

func (c *Client) hostedLogs(ctx context.Context, kind, id string) (*CheckoutLogs, error) {
	if c.apiKey == "" {
		return nil, ErrAPIKeyRequired
	}
	if !validCode(id) && !validToken(id) {
		return nil, fmt.Errorf("%w: payment id is required", ErrInvalidOption)
	}
	var out CheckoutLogs
	err := c.do(ctx, &request{
		op:      kind + " logs",
		path:    kind + "/logs/",
		query:   url.Values{"token": {id}},
		retry:   true,
		needKey: true,
	}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
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
