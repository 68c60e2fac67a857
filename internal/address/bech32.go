package address

import (
	"strings"
)

// bech32Chars is the data alphabet of bech32 and cashaddr.
const bech32Chars = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// bech32Rev maps an ASCII byte to its 5-bit value, -1 when not in the
// alphabet (lower case only).
var bech32Rev = func() [128]int8 {
	var r [128]int8
	for i := range r {
		r[i] = -1
	}
	for i := 0; i < len(bech32Chars); i++ {
		r[bech32Chars[i]] = int8(i)
	}
	return r
}()

// The checksum constants of BIP-173 (bech32) and BIP-350 (bech32m).
const (
	bech32Const  = 1
	bech32mConst = 0x2bc830a3
)

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func hrpExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// bech32Decode splits a bech32 or bech32m string into its human-readable
// part and its data (checksum removed), and returns the checksum constant
// it carries (bech32Const or bech32mConst).
func bech32Decode(s string) (hrp string, data []byte, constant uint32, err error) {
	if len(s) > 90 {
		return "", nil, 0, invalid("longer than 90 characters")
	}
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return "", nil, 0, invalid("mixes upper and lower case")
	}
	s = strings.ToLower(s)
	pos := strings.LastIndexByte(s, '1')
	if pos < 1 || pos+7 > len(s) {
		return "", nil, 0, invalid("no separator, or too short")
	}
	hrp = s[:pos]
	for i := 0; i < len(hrp); i++ {
		if hrp[i] < 33 || hrp[i] > 126 {
			return "", nil, 0, invalid("malformed prefix")
		}
	}
	data = make([]byte, 0, len(s)-pos-1)
	for i := pos + 1; i < len(s); i++ {
		v := bech32Rev[s[i]]
		if v < 0 {
			return "", nil, 0, invalid("%q is not a bech32 character", s[i])
		}
		data = append(data, byte(v))
	}
	constant = bech32Polymod(append(hrpExpand(hrp), data...))
	if constant != bech32Const && constant != bech32mConst {
		return "", nil, 0, invalid("the checksum does not match (a mistyped character?)")
	}
	return hrp, data[:len(data)-6], constant, nil
}

// bech32Encode writes hrp and data with the checksum of constant.
func bech32Encode(hrp string, data []byte, constant uint32) string {
	values := append(hrpExpand(hrp), data...)
	pm := bech32Polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ constant
	var b strings.Builder
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, d := range data {
		b.WriteByte(bech32Chars[d])
	}
	for i := range 6 {
		b.WriteByte(bech32Chars[(pm>>(5*(5-i)))&31])
	}
	return b.String()
}

// convertBits regroups bits from groups of from to groups of to. With
// pad, the last group is padded with zeros; without, leftover bits must
// be fewer than from and zero.
func convertBits(data []byte, from, to uint, pad bool) ([]byte, bool) {
	acc, bits := uint(0), uint(0)
	maxv := uint(1)<<to - 1
	out := make([]byte, 0, len(data)*int(from)/int(to)+1)
	for _, v := range data {
		if uint(v)>>from != 0 {
			return nil, false
		}
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(to-bits)&maxv))
		}
	} else if bits >= from || acc<<(to-bits)&maxv != 0 {
		return nil, false
	}
	return out, true
}

// checkSegwit checks a segwit address of hrp (BIP-173, BIP-350): witness
// version 0 with bech32 and a program of 20 or 32 bytes, versions 1 to 16
// with bech32m and a program of 2 to 40 bytes.
func checkSegwit(s, wantHRP string) error {
	hrp, data, constant, err := bech32Decode(s)
	if err != nil {
		return err
	}
	if hrp != wantHRP {
		return invalid("prefix %q, not %q", hrp, wantHRP)
	}
	if len(data) < 1 {
		return invalid("no witness version")
	}
	version := data[0]
	prog, ok := convertBits(data[1:], 5, 8, false)
	switch {
	case version > 16:
		return invalid("witness version %d", version)
	case !ok:
		return invalid("malformed witness program padding")
	case len(prog) < 2 || len(prog) > 40:
		return invalid("witness program of %d bytes", len(prog))
	case version == 0 && len(prog) != 20 && len(prog) != 32:
		return invalid("version 0 witness program of %d bytes (20 or 32)", len(prog))
	case version == 0 && constant != bech32Const:
		return invalid("a version 0 address must use bech32, not bech32m")
	case version != 0 && constant != bech32mConst:
		return invalid("a version %d address must use bech32m, not bech32", version)
	}
	return nil
}

// Segwit writes a segwit address of hrp for a witness version and
// program: bech32 for version 0, bech32m otherwise.
func Segwit(hrp string, version byte, program []byte) string {
	conv, _ := convertBits(program, 8, 5, true)
	constant := uint32(bech32Const)
	if version != 0 {
		constant = bech32mConst
	}
	return bech32Encode(hrp, append([]byte{version}, conv...), constant)
}
