package cryptapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/forwardpay/cryptapi-go/internal/fields"
)

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
