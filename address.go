package cryptapi

import (
	"errors"
	"fmt"

	"github.com/forwardpay/cryptapi-go/internal/address"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// Errors of ValidateAddress, also wrapped by the destination checks of
// CreateAddress, RequestPayment and the payout calls.
var (
	// ErrInvalidAddress is matched by the error for an address that is not
	// one of its coin's network: a mistyped character (the checksum does
	// not match), another network's address, white space, a character that
	// only looks like a letter or a digit. The error says which.
	ErrInvalidAddress = errors.New("cryptapi: not an address of the coin's network")
	// ErrAddressFormatUnknown is returned by ValidateAddress for a coin
	// whose address format the SDK does not know. The destination checks
	// of the client let such an address through (the service judges it).
	ErrAddressFormatUnknown = errors.New("cryptapi: the SDK does not know this coin's address format")
)

// ValidateAddress reports whether addr is an address of the network of
// ticker ("btc", "trc20_usdt" or "trc20/usdt"), checksums included. It
// does no I/O. It knows:
//
//   - btc: legacy P2PKH (1…) and P2SH (3…) in Base58Check, segwit in
//     bech32 (bc1q…) and bech32m (bc1p…, BIP-350);
//   - ltc: L…, M… and 3… in Base58Check, segwit ltc1…;
//   - bch: CashAddr with its checksum (bitcoincash:q…, the prefix
//     optional, one case throughout), and the legacy 1… and 3…;
//   - doge: D…, 9… and A… in Base58Check;
//   - EVM coins and tokens (eth, etc, bnb, pol, matic, avax-c, and the
//     tokens of erc20, bep20, polygon, base, arbitrum, optimism and
//     avax-c): 0x and 40 hex digits, with the EIP-55 checksum when the
//     letters are in mixed case;
//   - trx and trc20 tokens: T… in Base58Check.
//
// It returns nil, an error matching ErrInvalidAddress that says why, or,
// for another coin, ErrAddressFormatUnknown (and ErrInvalidTicker for a
// ticker that is not one). The address must be exactly the address:
// surrounding white space is refused, so trim what a person pasted first.
func ValidateAddress(tickerName, addr string) error {
	t, err := parseTicker(tickerName)
	if err != nil {
		return err
	}
	return validateAddress(t, addr)
}

func validateAddress(t ticker.Ticker, addr string) error {
	f := address.FamilyOf(t.Network, t.Coin)
	if f == address.Unknown {
		return fmt.Errorf("%w: %s", ErrAddressFormatUnknown, t.Key())
	}
	if err := address.Check(f, addr); err != nil {
		var e *address.Error
		if errors.As(err, &e) {
			return fmt.Errorf("%w (%s): %s", ErrInvalidAddress, t.Key(), e.Reason)
		}
		return fmt.Errorf("%w (%s)", ErrInvalidAddress, t.Key())
	}
	return nil
}

// checkDestination refuses a destination address of t's coin that cannot
// be one: text no address has, and, for a coin whose format the SDK knows
// (see ValidateAddress), an address that is not of its network. An
// address of a coin whose format the SDK does not know is the service's
// to judge.
func checkDestination(t ticker.Ticker, addr string) error {
	if !validAddressText(addr) {
		return fmt.Errorf("%w: contains characters no address has", ErrInvalidAddress)
	}
	if err := validateAddress(t, addr); err != nil && !errors.Is(err, ErrAddressFormatUnknown) {
		return err
	}
	return nil
}
