package cryptapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/fields"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// MaxCreateRequestLen is the longest create request the service accepts,
// in characters of the full request URL.
const MaxCreateRequestLen = 8192

// MaxOutputs is the largest number of destinations in one create call.
const MaxOutputs = 20

// Output is one destination of forwarded funds and its share of them.
type Output struct {
	// Address is the destination address, valid for the ticker.
	Address string
	// Share is the fraction of forwarded funds, for example 0.5.
	Share decimal.Decimal
}

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

// addressOutText returns address_out as text whether the service sent a
// string or an object.
func addressOutText(raw json.RawMessage) string {
	if s, err := wire.DecodeString(raw); err == nil {
		return s
	}
	return string(raw)
}

// ErrDestinationMismatch is matched (errors.Is) by a
// *DestinationMismatchError.
var ErrDestinationMismatch = errors.New("cryptapi: the service bound another destination to this callback URL")

// DestinationMismatchError is returned by CreateAddress (and so by
// RequestPayment) when the service's answer binds a destination other than
// the one asked for: its address_out (the destination, or the outputs and
// their shares) or its callback_url differs from the request, or
// address_out cannot be read and so cannot be checked. No address is
// returned: payments to it would be forwarded elsewhere.
//
// The service binds a callback URL to its first destination for good, and
// in the keyless form anyone can create an address with any callback URL.
// This error therefore usually means that someone registered the callback
// URL first, with their own destination. Use a new callback URL holding a
// fresh, unguessable nonce (see NewNonce).
type DestinationMismatchError struct {
	// Ticker is the coin, in "trc20_usdt" form.
	Ticker string
	// AskedOutputs are the destinations asked for (one with share 1 for
	// CreateOptions.Address); nil when none was asked (the API-key form
	// using the dashboard's destinations), in which case only the callback
	// URL is checked.
	AskedOutputs []Output
	// AskedCallbackURL is the callback URL as sent.
	AskedCallbackURL string
	// BoundAddressOut is address_out as the service wrote it.
	BoundAddressOut string
	// BoundOutputs is BoundAddressOut parsed; nil when it cannot be.
	BoundOutputs []Output
	// BoundCallbackURL is callback_url as the service wrote it.
	BoundCallbackURL string
}

// Error implements error. It names what differs but not the URLs, whose
// nonce is the merchant's secret, nor the addresses.
func (e *DestinationMismatchError) Error() string {
	var what []string
	if e.AskedOutputs != nil {
		switch {
		case e.BoundOutputs == nil:
			what = append(what, "its address_out cannot be read")
		case !sameOutputs(e.Ticker, e.AskedOutputs, e.BoundOutputs):
			what = append(what, "its address_out differs from the destination asked for")
		}
	}
	if !callbackurl.Same(e.AskedCallbackURL, e.BoundCallbackURL) {
		what = append(what, "its callback_url differs from the one sent")
	}
	if len(what) == 0 {
		what = append(what, "it does not match the request")
	}
	return fmt.Sprintf("cryptapi: %s address refused: %s; the service binds a callback URL to its first destination, so use a new callback URL with a fresh nonce",
		e.Ticker, strings.Join(what, " and "))
}

// Is makes errors.Is(err, ErrDestinationMismatch) true.
func (e *DestinationMismatchError) Is(target error) bool { return target == ErrDestinationMismatch }

// NewNonce returns 128 bits from crypto/rand as 32 lower-case hexadecimal
// digits, for the callback URL of one payment:
//
//	Params: url.Values{"order_id": {id}, "nonce": {cryptapi.NewNonce()}}
//
// Store it with the order and refuse callbacks whose nonce is not the
// order's. A callback URL is bound to its first destination for good, and
// in the keyless form anyone can register one: a URL that can be guessed
// (an order number alone) can be registered first with another wallet.
func NewNonce() string {
	var b [16]byte
	// crypto/rand.Read does not fail: the program crashes rather than
	// return predictable bytes.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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
	cb, dest, err := c.createParams(o)
	if err != nil {
		return nil, err
	}
	var out Address
	err = c.do(ctx, &request{
		op:     "create",
		path:   t.Path() + "/create/",
		opts:   o,
		query:  createValues(cb, dest),
		retry:  true,
		maxURL: MaxCreateRequestLen,
	}, &out)
	if err != nil {
		return nil, err
	}
	if err := checkBinding(t.Key(), cb, o, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// shareOne is the share of a single destination. A Decimal is an
// immutable value, so every Output may hold this one.
var shareOne = decimal.NewFromInt(1)

// askedOutputs appends to buf the destinations o asks for, as sent; it
// returns nil for none.
func askedOutputs(o *CreateOptions, buf []Output) []Output {
	if a := strings.TrimSpace(o.Address); a != "" {
		return append(buf, Output{Address: a, Share: shareOne})
	}
	if len(o.Outputs) == 0 {
		return nil
	}
	for _, x := range o.Outputs {
		buf = append(buf, Output{Address: strings.TrimSpace(x.Address), Share: x.Share})
	}
	return buf
}

// checkBinding compares the create answer a with the request o. callback
// is the callback parameter as sent, which CallbackURL accepted.
func checkBinding(ticker, callback string, o *CreateOptions, a *Address) error {
	var buf [1]Output // a single destination is compared without allocating
	asked := askedOutputs(o, buf[:0])
	ok := callbackurl.Same(callback, a.CallbackURL)
	if asked != nil {
		ok = ok && a.Outputs != nil && sameOutputs(ticker, asked, a.Outputs)
	}
	if ok {
		return nil
	}
	return &DestinationMismatchError{
		Ticker:           ticker,
		AskedOutputs:     slices.Clone(asked),
		AskedCallbackURL: callback,
		BoundAddressOut:  a.AddressOut,
		BoundOutputs:     a.Outputs,
		BoundCallbackURL: a.CallbackURL,
	}
}

// sameOutputs reports whether a and b are the same destinations of coin
// ticker ("btc" form): the same addresses with equal shares (as exact
// decimals, so 0.5 equals 0.50), in any order, each once. Addresses are
// compared as their chains compare them: byte for byte (base58 and most
// others are case-sensitive), except an Ethereum-style address (0x and 40
// hex digits), whose case is only a checksum, and a bech32 or cashaddr
// address of its own coin (bc1… for btc, ltc1… for ltc, bitcoincash:… for
// bch), which may be written all in lower or all in upper case but not
// mixed.
func sameOutputs(ticker string, a, b []Output) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	var buf [MaxOutputs]bool
	var used []bool
	if len(b) <= len(buf) {
		used = buf[:len(b)]
	} else {
		used = make([]bool, len(b))
	}
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && sameAddress(ticker, x.Address, y.Address) {
				if !x.Share.Equal(y.Share) {
					return false
				}
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sameAddress reports whether a and b are the same address of coin ticker,
// by the rules of sameOutputs.
func sameAddress(ticker, a, b string) bool {
	if a == b {
		return a != ""
	}
	if !strings.EqualFold(a, b) {
		return false
	}
	return isEVMAddress(a) && isEVMAddress(b) || caseFreeAddress(ticker, a) && caseFreeAddress(ticker, b)
}

func isEVMAddress(s string) bool {
	if len(s) != 42 || s[0] != '0' || s[1] != 'x' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// caseFreePrefixes are, per coin, the prefixes of its addresses whose
// encoding ignores case when written in one case: bech32 (BIP 173) and
// cashaddr. Other coins' addresses (base58 ones too, which could begin with
// the same letters) are compared byte for byte.
var caseFreePrefixes = map[string][]string{
	"btc": {"bc1", "tb1", "bcrt1"},
	"ltc": {"ltc1", "tltc1"},
	"bch": {"bitcoincash:", "bchtest:"},
}

// caseFreeAddress reports whether s is a bech32 or cashaddr address of coin
// ticker written in one case, with only bech32 characters after its prefix.
// It is ASCII: Unicode case folding would take a look-alike such as the
// Kelvin sign (U+212A) for the letter k.
func caseFreeAddress(ticker, s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return false // mixed case is invalid in bech32 and cashaddr
	}
	l := strings.ToLower(s)
	for _, p := range caseFreePrefixes[ticker] {
		if rest, ok := strings.CutPrefix(l, p); ok && rest != "" {
			return strings.Trim(rest, bech32Chars) == ""
		}
	}
	return false
}

// bech32Chars is the bech32 data alphabet (also cashaddr's).
const bech32Chars = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// createParams checks o as the service would and returns the callback and
// address parameters (address "" for none); nothing else of o needs
// checking before it is sent.
func (c *Client) createParams(o *CreateOptions) (callback, address string, err error) {
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
	dest, err := destination(o.Address, o.Outputs)
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

// CallbackURL returns base with params merged into its query, as
// CreateAddress sends it. Parameters already in base are kept byte for byte;
// params are appended, encoded once. base must be an absolute http(s) URL
// of printable ASCII characters without a fragment, whose query the
// callback package can parse: no ';' separator, no '%' that is not an
// escape, no parameter without a name. The callback package reads every
// callback's query with the same parser, so a URL this function accepts
// is one whose callbacks can be parsed, to the same parameters. A
// refused URL is ErrInvalidCallback, or ErrInvalidOption for a parameter
// named like a callback field.
func CallbackURL(base string, params url.Values) (string, error) {
	if strings.TrimSpace(base) == "" {
		return "", ErrCallbackRequired
	}
	u, _, err := callbackurl.Parse(base)
	if err != nil {
		return "", callbackError(err)
	}
	if len(params) == 0 {
		return base, nil
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		if k == "" || fields.IsCallback(k) {
			return "", fmt.Errorf("%w: custom parameter %q is a callback field name", ErrInvalidOption, k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Append to the text as given, so existing parameters keep their exact
	// encoding; a trailing "?" or "&" is not doubled.
	var b strings.Builder
	b.WriteString(strings.TrimRight(base, "?&"))
	sep := "?"
	if strings.Trim(u.RawQuery, "&") != "" {
		sep = "&"
	}
	for _, k := range keys {
		for _, v := range params[k] {
			b.WriteString(sep)
			b.WriteString(url.QueryEscape(k))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(v))
			sep = "&"
		}
	}
	out := b.String()
	if _, _, err := callbackurl.Parse(out); err != nil {
		return "", callbackError(err)
	}
	return out, nil
}

// callbackError maps a reason of callbackurl.Parse to the package's errors:
// the service adds its fields to the callback URL's query, and a parameter
// of the same name would make every callback ambiguous and unacceptable.
func callbackError(err error) error {
	if errors.Is(err, callbackurl.ErrFieldName) {
		return fmt.Errorf("%w: callback URL %v", ErrInvalidOption, err)
	}
	return fmt.Errorf("%w: %v", ErrInvalidCallback, err)
}

// destination encodes Address or Outputs as the service's address parameter.
func destination(addr string, outs []Output) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr != "" && len(outs) > 0 {
		return "", fmt.Errorf("%w: set Address or Outputs, not both", ErrInvalidOutputs)
	}
	if addr != "" {
		if !validAddressText(addr) {
			return "", fmt.Errorf("%w: address contains characters no address has", ErrInvalidOutputs)
		}
		return addr, nil
	}
	if len(outs) == 0 {
		return "", nil
	}
	if len(outs) > MaxOutputs {
		return "", fmt.Errorf("%w: %d destinations, at most %d", ErrInvalidOutputs, len(outs), MaxOutputs)
	}
	sum := decimal.Zero
	seen := make(map[string]bool, len(outs))
	parts := make([]string, 0, len(outs))
	for i, o := range outs {
		a := strings.TrimSpace(o.Address)
		if !validAddressText(a) {
			return "", fmt.Errorf("%w: output %d has an empty or malformed address", ErrInvalidOutputs, i)
		}
		if seen[a] {
			return "", fmt.Errorf("%w: output %d repeats an address", ErrInvalidOutputs, i)
		}
		seen[a] = true
		if !o.Share.IsPositive() || o.Share.GreaterThan(shareOne) {
			return "", fmt.Errorf("%w: output %d share must be in (0, 1]", ErrInvalidOutputs, i)
		}
		sum = sum.Add(o.Share)
		parts = append(parts, o.Share.String()+"@"+a)
	}
	if !sum.Equal(shareOne) {
		return "", fmt.Errorf("%w: shares add up to %s, not 1", ErrInvalidOutputs, sum.String())
	}
	return strings.Join(parts, "|"), nil
}

// validAddressText rejects what no blockchain address contains: nothing,
// white space, control characters and the separators of the outputs form.
// Whether an address is valid for its coin is the service's judgement.
func validAddressText(a string) bool {
	if a == "" || len(a) > 128 {
		return false
	}
	for _, r := range a {
		if r <= ' ' || r == 0x7f || r == '|' || r == '@' || r == '&' || r == '#' || r == '?' || r == '/' || r == '\\' || r == '"' || r == '\'' {
			return false
		}
	}
	return true
}

// ParseAddressOut parses address_out text: a single address (share 1),
// the service's text map {"addr": 0.7, "addr2": 0.3} (also with single
// quotes), or the <share>@<address>|... form. The order of the text is
// kept. An error means the text is none of these.
func ParseAddressOut(s string) ([]Output, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty address_out", ErrInvalidOutputs)
	}
	switch {
	case strings.HasPrefix(s, "{"):
		return parseOutputMap(s)
	case strings.Contains(s, "@"):
		return parseOutputPipes(s)
	case validAddressText(s):
		return []Output{{Address: s, Share: shareOne}}, nil
	}
	return nil, fmt.Errorf("%w: unrecognised address_out", ErrInvalidOutputs)
}

func parseOutputsLenient(s string) []Output {
	outs, err := ParseAddressOut(s)
	if err != nil {
		return nil
	}
	return outs
}

func parseOutputMap(s string) ([]Output, error) {
	if !strings.Contains(s, `"`) {
		s = strings.ReplaceAll(s, "'", `"`)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: address_out is not a map", ErrInvalidOutputs)
	}
	var outs []Output
	for dec.More() {
		if len(outs) >= 10*MaxOutputs {
			return nil, fmt.Errorf("%w: too many outputs", ErrInvalidOutputs)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: malformed address_out", ErrInvalidOutputs)
		}
		addr, ok := tok.(string)
		if !ok || !validAddressText(addr) {
			return nil, fmt.Errorf("%w: malformed address in address_out", ErrInvalidOutputs)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: malformed share in address_out", ErrInvalidOutputs)
		}
		share, err := wire.DecodeDecimal(raw)
		if err != nil || !share.IsPositive() {
			return nil, fmt.Errorf("%w: malformed share in address_out", ErrInvalidOutputs)
		}
		outs = append(outs, Output{Address: addr, Share: share})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("%w: malformed address_out", ErrInvalidOutputs)
	}
	if strings.TrimSpace(s[dec.InputOffset():]) != "" {
		return nil, fmt.Errorf("%w: trailing data in address_out", ErrInvalidOutputs)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%w: empty address_out map", ErrInvalidOutputs)
	}
	return outs, nil
}

func parseOutputPipes(s string) ([]Output, error) {
	parts := strings.Split(s, "|")
	if len(parts) > 10*MaxOutputs {
		return nil, fmt.Errorf("%w: too many outputs", ErrInvalidOutputs)
	}
	outs := make([]Output, 0, len(parts))
	for _, p := range parts {
		share, addr, ok := strings.Cut(strings.TrimSpace(p), "@")
		if !ok || !validAddressText(addr) {
			return nil, fmt.Errorf("%w: malformed output", ErrInvalidOutputs)
		}
		d, err := wire.ParseDecimal(share)
		if err != nil || !d.IsPositive() {
			return nil, fmt.Errorf("%w: malformed share", ErrInvalidOutputs)
		}
		outs = append(outs, Output{Address: addr, Share: d})
	}
	return outs, nil
}
