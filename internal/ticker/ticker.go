// Package ticker validates and normalises the service's coin tickers.
//
// A native coin is one segment ("btc", "avax-c"); a token is a network and a
// token, written "trc20/usdt" in URL paths and "trc20_usdt" in callbacks and
// info answers. Both spellings are accepted from the user, in any case.
package ticker

import (
	"errors"
	"strings"
)

// ErrInvalid is returned for text that is not a ticker.
var ErrInvalid = errors.New("not a ticker")

// maxSegment bounds one segment; real tickers are a handful of characters.
const maxSegment = 32

// Ticker is a validated ticker.
type Ticker struct {
	Network string // "" for a native coin
	Coin    string // the coin, or the token on Network
}

// Parse validates s and splits it into network and coin. The accepted
// grammar per segment is [a-z0-9]+([.-][a-z0-9]+)*, so "..", leading or
// trailing separators, spaces, "?", "%" and "/" inside a segment are refused.
func Parse(s string) (Ticker, error) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			// Lower-casing would turn some non-ASCII letters into ASCII
			// ones (the Kelvin sign into "k"); no ticker has them.
			return Ticker{}, ErrInvalid
		}
	}
	s = strings.ToLower(s)
	var net, coin string
	switch {
	case strings.Count(s, "/") == 1 && !strings.Contains(s, "_"):
		net, coin, _ = strings.Cut(s, "/")
	case strings.Count(s, "_") == 1 && !strings.Contains(s, "/"):
		net, coin, _ = strings.Cut(s, "_")
	case !strings.ContainsAny(s, "/_"):
		coin = s
	default:
		return Ticker{}, ErrInvalid
	}
	if net != "" || strings.ContainsAny(s, "/_") {
		if !validSegment(net) {
			return Ticker{}, ErrInvalid
		}
	}
	if !validSegment(coin) {
		return Ticker{}, ErrInvalid
	}
	return Ticker{Network: net, Coin: coin}, nil
}

// Path is the URL path form: "btc" or "trc20/usdt". Every character is
// already URL-safe, so it needs no escaping.
func (t Ticker) Path() string {
	if t.Network == "" {
		return t.Coin
	}
	return t.Network + "/" + t.Coin
}

// Key is the callback and info form: "btc" or "trc20_usdt".
func (t Ticker) Key() string {
	if t.Network == "" {
		return t.Coin
	}
	return t.Network + "_" + t.Coin
}

// String returns Key.
func (t Ticker) String() string { return t.Key() }

func validSegment(s string) bool {
	if s == "" || len(s) > maxSegment {
		return false
	}
	prevSep := true // a separator may not start a segment
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevSep = false
		case c == '.' || c == '-':
			if prevSep {
				return false
			}
			prevSep = true
		default:
			return false
		}
	}
	return !prevSep
}
