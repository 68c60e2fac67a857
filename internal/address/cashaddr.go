package address

import (
	"strings"
)

// cashPrefix is the CashAddr prefix of Bitcoin Cash's main network.
const cashPrefix = "bitcoincash"

// cashPolymod is the 40-bit BCH checksum of the CashAddr specification.
func cashPolymod(values []byte) uint64 {
	c := uint64(1)
	for _, d := range values {
		c0 := byte(c >> 35)
		c = (c&0x07ffffffff)<<5 ^ uint64(d)
		if c0&0x01 != 0 {
			c ^= 0x98f2bc8e61
		}
		if c0&0x02 != 0 {
			c ^= 0x79b76d99e2
		}
		if c0&0x04 != 0 {
			c ^= 0xf33e5fb3c4
		}
		if c0&0x08 != 0 {
			c ^= 0xae2eabe2a8
		}
		if c0&0x10 != 0 {
			c ^= 0x1e4f43e470
		}
	}
	return c ^ 1
}

func cashPrefixValues(prefix string) []byte {
	out := make([]byte, 0, len(prefix)+1)
	for i := 0; i < len(prefix); i++ {
		out = append(out, prefix[i]&0x1f)
	}
	return append(out, 0)
}

// cashSizes are the hash sizes in bytes of the version byte's size bits.
var cashSizes = [8]int{20, 24, 28, 32, 40, 48, 56, 64}

// checkCashAddr checks a CashAddr address of Bitcoin Cash's main network,
// with or without its prefix: one case throughout, the 40-bit checksum,
// a version byte of type 0 to 3 (P2PKH, P2SH, and their token-aware
// forms) whose size bits match the hash.
func checkCashAddr(s string) error {
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return invalid("mixes upper and lower case")
	}
	s = strings.ToLower(s)
	prefix, payload, ok := strings.Cut(s, ":")
	if !ok {
		prefix, payload = cashPrefix, s
	}
	if prefix != cashPrefix {
		return invalid("prefix %q, not %q", prefix, cashPrefix)
	}
	if len(payload) < 8+34 {
		return invalid("too short for a cashaddr address")
	}
	data := make([]byte, 0, len(payload))
	for i := 0; i < len(payload); i++ {
		v := bech32Rev[payload[i]&0x7f]
		if payload[i] >= 0x80 || v < 0 {
			return invalid("%q is not a cashaddr character", payload[i])
		}
		data = append(data, byte(v))
	}
	if cashPolymod(append(cashPrefixValues(prefix), data...)) != 0 {
		return invalid("the checksum does not match (a mistyped character?)")
	}
	raw, ok := convertBits(data[:len(data)-8], 5, 8, false)
	if !ok || len(raw) < 1 {
		return invalid("malformed cashaddr payload")
	}
	version, hash := raw[0], raw[1:]
	switch {
	case version&0x80 != 0:
		return invalid("reserved version bit set")
	case version>>3 > 3:
		return invalid("unknown cashaddr type %d", version>>3)
	case len(hash) != cashSizes[version&7]:
		return invalid("a %d-byte hash where the version says %d", len(hash), cashSizes[version&7])
	}
	return nil
}

// CashAddr writes a CashAddr address with the "bitcoincash:" prefix, of
// type (0 for P2PKH, 1 for P2SH) and hash (one of the sizes the format
// allows).
func CashAddr(typ byte, hash []byte) string {
	size := byte(0)
	for i, n := range cashSizes {
		if n == len(hash) {
			size = byte(i)
		}
	}
	data, _ := convertBits(append([]byte{typ<<3 | size}, hash...), 8, 5, true)
	values := append(cashPrefixValues(cashPrefix), data...)
	pm := cashPolymod(append(values, 0, 0, 0, 0, 0, 0, 0, 0))
	var b strings.Builder
	b.WriteString(cashPrefix + ":")
	for _, d := range data {
		b.WriteByte(bech32Chars[d])
	}
	for i := range 8 {
		b.WriteByte(bech32Chars[(pm>>(5*(7-i)))&31])
	}
	return b.String()
}
