package address

import (
	"encoding/hex"
	"strings"

	"golang.org/x/crypto/sha3"
)

// checkEVM checks an EVM address: "0x" and 40 hex digits, all in lower
// case, all in upper case, or in the mixed case of its EIP-55 checksum.
func checkEVM(s string) error {
	if len(s) != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return invalid("not 0x and 40 hex digits")
	}
	digits := s[2:]
	if _, err := hex.DecodeString(digits); err != nil {
		return invalid("not 0x and 40 hex digits")
	}
	if s[1] == 'X' {
		return invalid("the prefix is 0x, not 0X")
	}
	if digits == strings.ToLower(digits) || digits == strings.ToUpper(digits) {
		return nil // no checksum to check
	}
	if want := EIP55(digits); want[2:] != digits {
		return invalid("the EIP-55 checksum (the case of its letters) does not match (a mistyped character?)")
	}
	return nil
}

// EIP55 returns the address of 40 hex digits (with or without 0x, any
// case) written with its EIP-55 checksum: each letter upper case where
// the matching nibble of the Keccak-256 hash of the lower-case digits is
// 8 or more.
func EIP55(addr string) string {
	digits := strings.ToLower(strings.TrimPrefix(addr, "0x"))
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(digits))
	sum := h.Sum(nil)
	out := []byte(digits)
	for i, c := range out {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && c <= 'f' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out)
}
