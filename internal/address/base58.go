package address

import (
	"bytes"
	"crypto/sha256"
	"math/big"
	"slices"
)

const base58Chars = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Rev = func() [128]int8 {
	var r [128]int8
	for i := range r {
		r[i] = -1
	}
	for i := 0; i < len(base58Chars); i++ {
		r[base58Chars[i]] = int8(i)
	}
	return r
}()

// base58Decode decodes s (at most maxLen characters, so math/big is
// cheap).
func base58Decode(s string) ([]byte, error) {
	n := new(big.Int)
	b58 := big.NewInt(58)
	zeros := 0
	for i := 0; i < len(s); i++ {
		v := base58Rev[s[i]&0x7f]
		if s[i] >= 0x80 || v < 0 {
			return nil, invalid("%q is not a base58 character", s[i])
		}
		if n.Sign() == 0 && v == 0 {
			zeros++
		}
		n.Mul(n, b58)
		n.Add(n, big.NewInt(int64(v)))
	}
	return append(make([]byte, zeros), n.Bytes()...), nil
}

func base58Encode(b []byte) string {
	n := new(big.Int).SetBytes(b)
	b58 := big.NewInt(58)
	var out []byte
	mod := new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, b58, mod)
		out = append(out, base58Chars[mod.Int64()])
	}
	for _, c := range b {
		if c != 0 {
			break
		}
		out = append(out, '1')
	}
	slices.Reverse(out)
	return string(out)
}

func checksum4(b []byte) []byte {
	h := sha256.Sum256(b)
	h = sha256.Sum256(h[:])
	return h[:4]
}

// checkBase58 checks a Base58Check address: payload bytes (version byte
// included) and a 4-byte double-SHA-256 checksum, with one of the
// versions.
func checkBase58(s string, payload int, versions ...byte) error {
	if len(s) < 25 || len(s) > 36 {
		return invalid("%d characters, not the length of a base58 address", len(s))
	}
	b, err := base58Decode(s)
	if err != nil {
		return err
	}
	if len(b) != payload+4 {
		return invalid("decodes to %d bytes, not %d", len(b), payload+4)
	}
	if !bytes.Equal(checksum4(b[:payload]), b[payload:]) {
		return invalid("the checksum does not match (a mistyped character?)")
	}
	if !slices.Contains(versions, b[0]) {
		return invalid("version byte 0x%02x is another network's", b[0])
	}
	return nil
}

// Base58Check writes a Base58Check address of version and hash.
func Base58Check(version byte, hash []byte) string {
	b := append([]byte{version}, hash...)
	return base58Encode(append(b, checksum4(b)...))
}
