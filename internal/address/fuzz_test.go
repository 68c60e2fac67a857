package address

import (
	"strings"
	"testing"
)

// FuzzCheck: any text, for every family: no panic; what is accepted is
// printable ASCII of at most maxLen bytes, is found by Detect, and stays
// accepted in the case its format allows (bech32 and cashaddr in upper
// case, EVM in lower case); a bech32 or cashaddr address with one data
// character substituted is always refused (their checksums detect any
// single substitution).
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "BC1SW50QGDZ25J",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
		"bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2", "qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a",
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
		"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xde709f2102306220921060314715629080e2fb77",
		"ltc1qg82tmfq5ghlr0xh3m5v0y5lk3w8g8e6qymt7xe", "", "1", "bc1", "0x", "bitcoincash:", ":",
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, at uint8) {
		for _, fam := range families {
			if Check(fam, s) != nil {
				continue
			}
			if checkText(s) != nil {
				t.Fatalf("%s accepted %q, which has characters no address has", fam, s)
			}
			if Detect(s) == Unknown {
				t.Fatalf("%s accepted %q but Detect finds no family", fam, s)
			}
			switch {
			case fam == EVM:
				if err := Check(fam, strings.ToLower(s)); err != nil {
					t.Fatalf("%q accepted, its lower case refused: %v", s, err)
				}
			case caseFree(fam, s) >= -1:
				if err := Check(fam, strings.ToUpper(s)); err != nil {
					t.Fatalf("%q accepted, its upper case refused: %v", s, err)
				}
				// One substitution after the separator is always caught.
				sep := caseFree(fam, s)
				i := sep + 1 + int(at)%(len(s)-sep-1)
				low := strings.ToLower(s)
				for _, c := range []byte(bech32Chars) {
					if c == low[i] {
						continue
					}
					bad := low[:i] + string(c) + low[i+1:]
					if Check(fam, bad) == nil {
						t.Fatalf("%q accepted with character %d changed to %q", bad, i, c)
					}
				}
			}
		}
	})
}

// FuzzEncode: the writers make addresses their family accepts, for any
// hash of a size the format allows.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("0123456789abcdefghij0123456789ab"), uint8(0))
	f.Fuzz(func(t *testing.T, raw []byte, v uint8) {
		if len(raw) < 20 {
			return
		}
		h20 := raw[:20]
		for fam, s := range map[Family]string{
			Bitcoin:     Base58Check([]byte{0x00, 0x05}[v%2], h20),
			Litecoin:    Base58Check([]byte{0x30, 0x32}[v%2], h20),
			Dogecoin:    Base58Check([]byte{0x1e, 0x16}[v%2], h20),
			Tron:        Base58Check(0x41, h20),
			EVM:         EIP55(strings.ToLower(hexOf(h20))),
			BitcoinCash: CashAddr(v%2, h20),
		} {
			if err := Check(fam, s); err != nil {
				t.Fatalf("%s %q: %v", fam, s, err)
			}
		}
		for _, n := range []int{20, 32} {
			if len(raw) >= n {
				if err := Check(Bitcoin, Segwit("bc", 0, raw[:n])); err != nil {
					t.Fatal(err)
				}
				if err := Check(Litecoin, Segwit("ltc", 0, raw[:n])); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := 2 + int(v)%39; len(raw) >= n {
			s := Segwit("bc", 1+v%16, raw[:n])
			if err := Check(Bitcoin, s); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
		}
	})
}

// caseFree returns, for an address in a case-free form (segwit,
// cashaddr), the index of its separator (-1 for a cashaddr without
// prefix), and -2 for other forms.
func caseFree(fam Family, s string) int {
	low := strings.ToLower(s)
	switch {
	case fam == Bitcoin && strings.HasPrefix(low, "bc1"), fam == Litecoin && strings.HasPrefix(low, "ltc1"):
		return strings.LastIndexByte(s, '1')
	case fam == BitcoinCash && strings.Contains(s, ":"):
		return strings.IndexByte(s, ':')
	case fam == BitcoinCash && (low[0] == 'q' || low[0] == 'p'):
		return -1
	}
	return -2
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
