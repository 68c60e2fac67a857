package cryptapi

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// MaxCreateRequestLen is the longest create request the service accepts,
// in characters of the full request URL.
const MaxCreateRequestLen = 8192

// CreateOptions are the parameters of CreateAddress.
type CreateOptions struct {
	// Callback is the URL that receives the callbacks. It identifies the
	// payment setup permanently: a later create with the same callback and
	// another destination does not change the destination (use another
	// callback URL), and CreateAddress refuses such an answer with a
	// *DestinationMismatchError. Anyone can create an address with a URL
	// they can guess, so keep an unguessable nonce in it (NewNonce).
	// Required; see CallbackURL for what is accepted.
	Callback string `url:"-"`
	// Params is custom data merged into the callback URL's query (for
	// example an order id and a nonce). It comes back on every callback.
	// Existing query parameters of Callback are kept as they are; names the
	// service uses for callback fields (uuid, value_coin, pending, ...) are
	// refused, because they would be confused with the service's own.
	Params url.Values `url:"-"`
	// Address is the single destination address. The keyless form requires
	// Address or Outputs; the API-key form may omit both and use the
	// addresses set in the dashboard.
	Address string `url:"-"`
	// Outputs are several destinations with shares that add up to 1,
	// encoded as <share>@<address>|... . Use either Address or Outputs.
	Outputs []Output `url:"-"`
	// Pending asks for a callback when the payment is seen, unconfirmed.
	Pending bool `url:"pending,int,omitempty"`
	// Confirmations required before the confirmed callback; 0 means the
	// service default (1). Negative values are refused.
	Confirmations int `url:"confirmations,omitempty"`
	// Email receives payment notifications (keyless form only).
	Email string `url:"email,omitempty"`
	// Post makes the service send callbacks as POST instead of GET.
	Post bool `url:"post,int,omitempty"`
	// JSON makes POST callbacks carry a JSON body instead of a form.
	JSON bool `url:"json,int,omitempty"`
	// Priority is the forwarding fee level ("default", "fast", ...);
	// allowed values differ per coin.
	Priority string `url:"priority,omitempty"`
	// MultiToken accepts a payment in any supported token to the address.
	MultiToken bool `url:"multi_token,int,omitempty"`
	// MultiChain makes the address usable on EVM-compatible networks.
	//
	// Deprecated: the service deprecates multi_chain.
	MultiChain bool `url:"multi_chain,int,omitempty"`
	// Convert makes callbacks carry value_coin_convert and
	// value_forwarded_coin_convert.
	Convert bool `url:"convert,int,omitempty"`
}

// Address is the answer of CreateAddress.
type Address struct {
	// AddressIn is the payment address the customer pays.
	AddressIn string
	// AddressOut is the destination as the service wrote it: one address,
	// or for several a text map such as {"1H6Z...": 0.70, "1PE5...": 0.30}.
	AddressOut string
	// Outputs is AddressOut parsed. CreateAddress fails with a
	// *DestinationMismatchError rather than return an Address whose
	// destination it asked for but could not read; Outputs is empty only
	// when no destination was asked (the API-key form using the
	// dashboard's) and the text could not be parsed.
	Outputs []Output
	// CallbackURL is the callback URL as stored; it is the key for Logs.
	CallbackURL string
	// Priority is the priority in effect.
	Priority string
	// MinimumTransactionCoin is the smallest payment that is forwarded, in
	// coin units, when the service includes it. Payments below it are lost.
	MinimumTransactionCoin decimal.Decimal
	// Status is "success".
	Status string
}

// addressWire is the create answer as encoding/json decodes it.
type addressWire struct {
	AddressIn   wire.String     `json:"address_in"`
	AddressOut  json.RawMessage `json:"address_out"`
	CallbackURL wire.String     `json:"callback_url"`
	Priority    wire.String     `json:"priority"`
	Minimum     wire.Amount     `json:"minimum_transaction_coin"`
	Status      wire.String     `json:"status"`
}

// UnmarshalJSON decodes the service's create answer.
func (a *Address) UnmarshalJSON(b []byte) error {
	var w addressWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	a.fromWire(&w)
	return nil
}

func (a *Address) apiStatus() string { return a.Status }

// fromWire fills a from the decoded answer.
func (a *Address) fromWire(w *addressWire) {
	out := addressOutText(w.AddressOut)
	*a = Address{
		AddressIn:              string(w.AddressIn),
		AddressOut:             out,
		Outputs:                parseOutputsLenient(out),
		CallbackURL:            string(w.CallbackURL),
		Priority:               string(w.Priority),
		MinimumTransactionCoin: w.Minimum.D(),
		Status:                 string(w.Status),
	}
}

// CreateAddress asks the service for a payment address for ticker
// ("btc", "trc20_usdt" or "trc20/usdt"). The request is checked before it
// is sent: a callback URL is required (and must be one the callback
// package can parse, see CallbackURL), the keyless form requires a
// destination, confirmations must not be negative, outputs must be valid
// and the whole request at most MaxCreateRequestLen characters.
//
// The answer is checked too: when its destination (address_out, compared
// as the outputs and their shares) or its callback_url differs from the
// request, or address_out cannot be read, the call fails with a
// *DestinationMismatchError and returns no address. The same destination
// means the same addresses with equal shares (exact decimals: 0.5 equals
// 0.50) in any order; addresses compare byte for byte, except that an
// Ethereum-style address (0x and 40 hex digits) ignores case and a bech32
// or cashaddr address of its own coin may come back in the other single
// case. The same callback URL means the same scheme, host (ASCII letters
// in any case), port and path and the same parameters and values, however
// the service re-encodes the query.
//
// Create is idempotent by callback URL on the service's side, so it is
// retried like a read.
func (c *Client) CreateAddress(ctx context.Context, ticker string, o *CreateOptions) (*Address, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	cb, dest, err := c.createParams(t, o)
	if err != nil {
		return nil, err
	}
	out, err := call[Address](ctx, c, &request{
		op:     "create",
		path:   t.Path() + "/create/",
		opts:   o,
		query:  createValues(cb, dest),
		retry:  true,
		maxURL: MaxCreateRequestLen,
	})
	if err != nil {
		return nil, err
	}
	if err := checkBinding(t.Key(), cb, o, out); err != nil {
		return nil, err
	}
	return out, nil
}

// createParams checks o as the service would and returns the callback and
// address parameters (address "" for none); nothing else of o needs
// checking before it is sent.
func (c *Client) createParams(t ticker.Ticker, o *CreateOptions) (callback, address string, err error) {
	if o == nil {
		return "", "", ErrCallbackRequired
	}
	cb, err := CallbackURL(o.Callback, o.Params)
	if err != nil {
		return "", "", err
	}
	if o.Confirmations < 0 {
		return "", "", ErrInvalidConfirmations
	}
	dest, err := destination(t, o.Address, o.Outputs)
	if err != nil {
		return "", "", err
	}
	if dest == "" && c.apiKey == "" {
		return "", "", ErrAddressRequired
	}
	return cb, dest, nil
}

// createValues returns what a create call sends besides the options'
// tagged fields: the callback and address parameters.
func createValues(callback, address string) url.Values {
	q := url.Values{"callback": {callback}}
	if address != "" {
		q.Set("address", address)
	}
	return q
}
