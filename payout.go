package cryptapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// PayoutOptions are the parameters of CreatePayout.
type PayoutOptions struct {
	// Address is the destination address. Required.
	Address string `url:"address"`
	// Value is the amount to send, in the ticker's coin. Required, positive.
	Value decimal.Decimal `url:"-"`
}

// Payout is the answer of CreatePayout and CreatePayouts.
type Payout struct {
	// Status is "success".
	Status string
	// RequestIDs are the ids of created requests, where the service gives
	// them (bulk requests); numbers are kept as their text.
	RequestIDs []string
}

// UnmarshalJSON decodes the payout answer.
func (p *Payout) UnmarshalJSON(b []byte) error {
	var w struct {
		Status     wire.String   `json:"status"`
		RequestIDs []wire.String `json:"request_ids"`
		RequestID  wire.String   `json:"request_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Payout{Status: string(w.Status)}
	for _, id := range w.RequestIDs {
		p.RequestIDs = append(p.RequestIDs, string(id))
	}
	if w.RequestID != "" {
		p.RequestIDs = append(p.RequestIDs, string(w.RequestID))
	}
	return nil
}

// CreatePayout requests a payout of o.Value to o.Address; the merchant
// finishes it in the dashboard. It needs an API key in both forms.
//
// A payout moves money, so it is never retried automatically, not even
// after a transport error: the request may have reached the service. Check
// the dashboard before sending it again.
func (c *Client) CreatePayout(ctx context.Context, ticker string, o *PayoutOptions) (*Payout, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if c.apiKey == "" {
		return nil, ErrAPIKeyRequired
	}
	if o == nil || strings.TrimSpace(o.Address) == "" {
		return nil, ErrAddressRequired
	}
	if !validAddressText(o.Address) {
		return nil, fmt.Errorf("%w: malformed address", ErrInvalidOption)
	}
	if !o.Value.IsPositive() {
		return nil, ErrInvalidValue
	}
	var out Payout
	err = c.do(ctx, &request{
		op:      "payout",
		path:    t.Path() + "/payout/request/create/",
		opts:    o,
		query:   url.Values{"value": {o.Value.String()}},
		needKey: true,
	}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreatePayouts requests several payouts at once (the bulk operation), one
// per destination address. Like CreatePayout it needs an API key and is
// never retried automatically.
func (c *Client) CreatePayouts(ctx context.Context, ticker string, outputs map[string]decimal.Decimal) (*Payout, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if c.apiKey == "" {
		return nil, ErrAPIKeyRequired
	}
	if len(outputs) == 0 {
		return nil, ErrAddressRequired
	}
	addrs := make([]string, 0, len(outputs))
	for a, v := range outputs {
		if !validAddressText(a) {
			return nil, fmt.Errorf("%w: malformed address", ErrInvalidOption)
		}
		if !v.IsPositive() {
			return nil, ErrInvalidValue
		}
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	// Amounts go out as JSON numbers with their exact decimal text.
	var b strings.Builder
	b.WriteString(`{"outputs":{`)
	for i, a := range addrs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(a)
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(outputs[a].String())
	}
	b.WriteString("}}")
	var out Payout
	err = c.do(ctx, &request{
		op:      "bulk payout",
		method:  "POST",
		path:    t.Path() + "/payout/request/bulk/",
		body:    []byte(b.String()),
		needKey: true,
	}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
