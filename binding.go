package cryptapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
)

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
