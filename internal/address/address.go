// Package address checks blockchain addresses against the rules of their
// network, checksums included, and writes valid ones (for the fake
// service and the tests). It is the one place the module knows address
// formats: the client's destination checks, the invoice package's refund
// addresses and the fake service all use it.
//
// The formats and their specifications:
//
//   - Bitcoin: Base58Check P2PKH (version 0x00) and P2SH (0x05); segwit
//     bech32 (BIP-173) for witness version 0 and bech32m (BIP-350) for
//     versions 1 to 16, human-readable part "bc".
//   - Litecoin: Base58Check 0x30 (L…), 0x32 (M…) and 0x05 (3…); segwit
//     with "ltc".
//   - Bitcoin Cash: CashAddr with its 40-bit checksum (the "bitcoincash:"
//     prefix optional), and the legacy Base58Check forms of Bitcoin.
//   - Dogecoin: Base58Check 0x1e (D…) and 0x16 (9… or A…).
//   - EVM networks (Ethereum and its tokens, BNB Smart Chain, Polygon,
//     and the other EVM chains): 0x and 40 hex digits; a mixed-case
//     address must carry its EIP-55 checksum.
//   - Tron and its tokens: Base58Check of 0x41 and a 20-byte hash (T…).
//
// Anything that is not printable ASCII is refused before any decoding, so
// a look-alike character (a Cyrillic "а", the Kelvin sign) never becomes
// an ASCII one on the way.
package address

import (
	"errors"
	"fmt"
	"strings"
)

// Family is an address format shared by a coin and its tokens.
type Family int

// Families the package knows. Unknown is the zero value.
const (
	Unknown Family = iota
	Bitcoin
	Litecoin
	BitcoinCash
	Dogecoin
	EVM
	Tron
)

// families lists the known families, in the order Detect tries them.
var families = []Family{Bitcoin, Litecoin, BitcoinCash, Dogecoin, EVM, Tron}

// String names the family for people ("Bitcoin", "EVM").
func (f Family) String() string {
	switch f {
	case Bitcoin:
		return "Bitcoin"
	case Litecoin:
		return "Litecoin"
	case BitcoinCash:
		return "Bitcoin Cash"
	case Dogecoin:
		return "Dogecoin"
	case EVM:
		return "EVM (Ethereum)"
	case Tron:
		return "Tron"
	}
	return "unknown"
}

// Errors. Check's refusals are *Error values, which match ErrInvalid.
var (
	// ErrInvalid is matched by every refusal of Check.
	ErrInvalid = errors.New("invalid address")
	// ErrUnknownFamily is returned by Check for the Unknown family.
	ErrUnknownFamily = errors.New("address format unknown")
)

// Error is a refusal of Check: why the text is not an address.
type Error struct{ Reason string }

func (e *Error) Error() string { return "invalid address: " + e.Reason }

// Is matches ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// invalid returns an *Error with the reason.
func invalid(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// nativeCoins maps native coins to their family; token networks are in
// networks.
var nativeCoins = map[string]Family{
	"btc": Bitcoin, "ltc": Litecoin, "bch": BitcoinCash, "doge": Dogecoin, "trx": Tron,
	"eth": EVM, "etc": EVM, "bnb": EVM, "pol": EVM, "matic": EVM, "avax-c": EVM,
}

// networks maps token networks to their family.
var networks = map[string]Family{
	"trc20": Tron, "erc20": EVM, "bep20": EVM, "polygon": EVM, "base": EVM, "arbitrum": EVM,
	"optimism": EVM, "avax-c": EVM,
}

// FamilyOf returns the family of a coin given as its network and coin
// ("" and "btc", "trc20" and "usdt"): a token has its network's format.
func FamilyOf(network, coin string) Family {
	if network != "" {
		return networks[network]
	}
	return nativeCoins[coin]
}

// Check reports whether s is an address of family f: nil, or an error
// wrapping ErrInvalid that says why (the checksum, the length, another
// network's form), or ErrUnknownFamily for Unknown. s must be exactly the
// address: surrounding white space is refused.
func Check(f Family, s string) error {
	if f == Unknown {
		return ErrUnknownFamily
	}
	if err := checkText(s); err != nil {
		return err
	}
	if err := check(f, s); err != nil {
		if g := Detect(s); g != Unknown && g != f {
			return invalid("this is the form of %s addresses, not of %s ones", g, f)
		}
		return err
	}
	return nil
}

// Detect returns the first family whose format s has, Unknown if none.
// Legacy Bitcoin Cash addresses have Bitcoin's form; Detect says Bitcoin.
func Detect(s string) Family {
	if checkText(s) != nil {
		return Unknown
	}
	for _, f := range families {
		if check(f, s) == nil {
			return f
		}
	}
	return Unknown
}

// maxLen bounds what is decoded at all: no address of a known family is
// longer (bech32 is limited to 90 characters, cashaddr with a 512-bit
// hash and its prefix to 124).
const maxLen = 128

// checkText refuses what no address of any family contains: nothing, more
// than maxLen bytes, and anything but printable ASCII.
func checkText(s string) error {
	switch {
	case s == "":
		return invalid("empty")
	case len(s) > maxLen:
		return invalid("longer than %d characters", maxLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return invalid("contains white space")
		case c < 0x21 || c > 0x7e:
			return invalid("contains a character that is not printable ASCII (a look-alike of a letter or digit?)")
		}
	}
	return nil
}

// check applies f's rules to s, which passed checkText.
func check(f Family, s string) error {
	switch f {
	case Bitcoin:
		return checkUTXO(s, "bc", 0x00, 0x05)
	case Litecoin:
		return checkUTXO(s, "ltc", 0x30, 0x32, 0x05)
	case BitcoinCash:
		if strings.ContainsRune(s, ':') || len(s) >= 42 && (s[0] == 'q' || s[0] == 'p' || s[0] == 'Q' || s[0] == 'P') {
			return checkCashAddr(s)
		}
		return checkBase58(s, 21, 0x00, 0x05)
	case Dogecoin:
		return checkBase58(s, 21, 0x1e, 0x16)
	case EVM:
		return checkEVM(s)
	case Tron:
		return checkBase58(s, 21, 0x41)
	}
	return ErrUnknownFamily
}

// checkUTXO checks a segwit address of hrp, or a Base58Check one with one
// of the versions.
func checkUTXO(s, hrp string, versions ...byte) error {
	if len(s) > len(hrp) && strings.EqualFold(s[:len(hrp)+1], hrp+"1") {
		return checkSegwit(s, hrp)
	}
	return checkBase58(s, 21, versions...)
}
