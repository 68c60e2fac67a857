package address

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BIP-173 "valid Bech32" and BIP-350 "valid Bech32m" strings: each
// decodes with its own checksum constant, and never with the other (no
// string is valid in both).
func TestBech32StringsOfTheBIPs(t *testing.T) {
	for s, constant := range map[string]uint32{
		"A12UEL5L": bech32Const,
		"a12uel5l": bech32Const,
		"an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs": bech32Const,
		"abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw":                                              bech32Const,
		"11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j": bech32Const,
		"split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w":                               bech32Const,
		"?1ezyfcl": bech32Const,
		"A1LQFN3A": bech32mConst,
		"a1lqfn3a": bech32mConst,
		"an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11sg7hg6": bech32mConst,
		"abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx":                                              bech32mConst,
		"11llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllludsr8": bech32mConst,
		"split1checkupstagehandshakeupstreamerranterredcaperredlc445v":                               bech32mConst,
		"?1v759aa": bech32mConst,
	} {
		_, _, got, err := bech32Decode(s)
		require.NoError(t, err, s)
		assert.Equal(t, constant, got, s)
	}
	for s, why := range map[string]string{
		"\x201nwldj5": "HRP character out of range",
		"\x7f1axkwrx": "HRP character out of range",
		"\x801eym55h": "HRP character out of range",
		"an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx": "overall max length exceeded",
		"pzry9x0s0muk":  "no separator character",
		"1pzry9x0s0muk": "empty HRP",
		"x1b4n0q5v":     "invalid data character",
		"li1dgmt3":      "too short checksum",
		"de1lg7wt\xff":  "invalid character in checksum",
		"A1G7SGD8":      "checksum calculated with uppercase form of HRP",
		"10a06t8":       "empty HRP",
		"1qzzfhee":      "empty HRP",
		"\x201xj0phk":   "HRP character out of range (bech32m)",
		"\x7f1g6xzxy":   "HRP character out of range (bech32m)",
		"\x801vctc34":   "HRP character out of range (bech32m)",
		"an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4": "overall max length exceeded (bech32m)",
		"qyrz8wqd2c9m":  "no separator character (bech32m)",
		"1qyrz8wqd2c9m": "empty HRP (bech32m)",
		"y1b0jsk6g":     "invalid data character (bech32m)",
		"lt1igcx5c0":    "invalid data character (bech32m)",
		"in1muywd":      "too short checksum (bech32m)",
		"mm1crxm3i":     "invalid character in checksum (bech32m)",
		"au1s5cgom":     "invalid character in checksum (bech32m)",
		"M1VUXWEZ":      "checksum calculated with uppercase form of HRP (bech32m)",
		"16plkw9":       "empty HRP (bech32m)",
		"1p2gdwpf":      "empty HRP (bech32m)",
	} {
		// Check refuses what is not printable ASCII before decoding;
		// bech32Decode itself must refuse the rest.
		if checkText(s) != nil {
			continue
		}
		_, _, _, err := bech32Decode(s)
		assert.ErrorIs(t, err, ErrInvalid, why)
	}
}

// BIP-350's segwit address vectors (which supersede BIP-173's for
// versions 1 to 16), for the "bc" and "tb" parts.
func TestSegwitAddressesOfBIP350(t *testing.T) {
	for _, s := range []string{
		"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
		"bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
		"BC1SW50QGDZ25J",
		"bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
	} {
		assert.NoError(t, Check(Bitcoin, s), s)
	}
	for _, s := range []string{
		"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
		"tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy",
		"tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
	} {
		assert.NoError(t, checkSegwit(s, "tb"), s)
		assert.ErrorIs(t, Check(Bitcoin, s), ErrInvalid, "%s: a test network address is not a Bitcoin one", s)
	}
	for s, why := range map[string]string{
		"tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut": "invalid human-readable part",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd": "bech32 instead of bech32m",
		"tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf": "bech32 instead of bech32m",
		"BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL": "bech32 instead of bech32m",
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh":                     "bech32m instead of bech32",
		"tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47": "bech32m instead of bech32",
		"bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4": "invalid character in checksum",
		"BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R": "invalid witness version",
		"bc1pw5dgrnzv": "program of 1 byte",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav": "program of 41 bytes",
		"BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P":                                         "version 0 program of 16 bytes",
		"tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq":               "mixed case",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf":             "zero padding of more than 4 bits",
		"tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j":               "non-zero padding",
		"bc1gmk9yu": "empty data section",
		"bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx":   "BIP-173's version 1 vector, in bech32, superseded by BIP-350",
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5":                                   "invalid checksum (BIP-173)",
		"bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90": "invalid program length (BIP-173)",
		"bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du":                                        "zero padding of more than 4 bits (BIP-173)",
	} {
		hrp := "bc"
		if strings.HasPrefix(strings.ToLower(s), "tb") {
			hrp = "tb"
		}
		assert.ErrorIs(t, checkSegwit(s, hrp), ErrInvalid, "%s: %s", s, why)
		assert.ErrorIs(t, Check(Bitcoin, s), ErrInvalid, "%s: %s", s, why)
	}
	// Encoding gives the vectors back.
	prog, _ := hex.DecodeString("751e76e8199196d454941c45d1b3a323f1433bd6")
	assert.Equal(t, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", Segwit("bc", 0, prog))
	prog, _ = hex.DecodeString("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
	assert.Equal(t, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", Segwit("bc", 1, prog))
}

// The CashAddr specification's translation table and larger vectors:
// every Bitcoin Cash one is accepted, with and without its prefix and in
// upper case; those of other prefixes are refused; legacy forms too.
func TestCashAddrVectors(t *testing.T) {
	legacy := map[string]string{
		"1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu": "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a",
		"1KXrWXciRDZUpQwQmuM1DbwsKDLYAYsVLR": "bitcoincash:qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy",
		"16w1D5WRVKJuZUsSRzdLp9w3YGcgoxDXb":  "bitcoincash:qqq3728yw0y47sqn6l2na30mcw6zm78dzqre909m2r",
		"3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC": "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq",
		"3LDsS579y7sruadqu11beEJoTjdFiFCdX4": "bitcoincash:pr95sy3j9xwd2ap32xkykttr4cvcu7as4yc93ky28e",
		"31nwvkZwyPdgzjBJZXfDmSWsC4ZLKpYyUw": "bitcoincash:pqq3728yw0y47sqn6l2na30mcw6zm78dzq5ucqzc37",
	}
	for old, cash := range legacy {
		assert.NoError(t, Check(BitcoinCash, old), old)
		assert.NoError(t, Check(Bitcoin, old), "%s is a Bitcoin address too", old)
		for _, s := range []string{cash, strings.TrimPrefix(cash, "bitcoincash:"), strings.ToUpper(cash)} {
			assert.NoError(t, Check(BitcoinCash, s), s)
		}
		b, err := base58Decode(old)
		require.NoError(t, err)
		typ := byte(0)
		if b[0] == 0x05 {
			typ = 1
		}
		assert.Equal(t, cash, CashAddr(typ, b[1:21]), "the same hash in the new form")
	}
	larger := []struct{ addr, data string }{
		{"bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2", "F5BF48B397DAE70BE82B3CCA4793F8EB2B6CDAC9"},
		{"bitcoincash:q9adhakpwzztepkpwp5z0dq62m6u5v5xtyj7j3h2ws4mr9g0", "7ADBF6C17084BC86C1706827B41A56F5CA32865925E946EA"},
		{"bitcoincash:qgagf7w02x4wnz3mkwnchut2vxphjzccwxgjvvjmlsxqwkcw59jxxuz", "3A84F9CF51AAE98A3BB3A78BF16A6183790B18719126325BFC0C075B"},
		{"bitcoincash:qvch8mmxy0rtfrlarg7ucrxxfzds5pamg73h7370aa87d80gyhqxq5nlegake", "3173EF6623C6B48FFD1A3DCC0CC6489B0A07BB47A37F47CFEF4FE69DE825C060"},
		{"bitcoincash:qnq8zwpj8cq05n7pytfmskuk9r4gzzel8qtsvwz79zdskftrzxtar994cgutavfklv39gr3uvz", "C07138323E00FA4FC122D3B85B9628EA810B3F381706385E289B0B25631197D194B5C238BEB136FB"},
		{"bitcoincash:qh3krj5607v3qlqh5c3wq3lrw3wnuxw0sp8dv0zugrrt5a3kj6ucysfz8kxwv2k53krr7n933jfsunqex2w82sl", "E361CA9A7F99107C17A622E047E3745D3E19CF804ED63C5C40C6BA763696B98241223D8CE62AD48D863F4CB18C930E4C"},
		{"bitcoincash:qmvl5lzvdm6km38lgga64ek5jhdl7e3aqd9895wu04fvhlnare5937w4ywkq57juxsrhvw8ym5d8qx7sz7zz0zvcypqscw8jd03f", "D9FA7C4C6EF56DC4FF423BAAE6D495DBFF663D034A72D1DC7D52CBFE7D1E6858F9D523AC0A7A5C34077638E4DD1A701BD017842789982041"},
		{"bitcoincash:qlg0x333p4238k0qrc5ej7rzfw5g8e4a4r6vvzyrcy8j3s5k0en7calvclhw46hudk5flttj6ydvjc0pv3nchp52amk97tqa5zygg96mtky5sv5w", "D0F346310D5513D9E01E299978624BA883E6BDA8F4C60883C10F28C2967E67EC77ECC7EEEAEAFC6DA89FAD72D11AC961E164678B868AEEEC5F2C1DA08884175B"},
	}
	for _, v := range larger {
		assert.NoError(t, Check(BitcoinCash, v.addr), v.addr)
		data, err := hex.DecodeString(v.data)
		require.NoError(t, err)
		assert.Equal(t, v.addr, CashAddr(0, data))
	}
	for _, s := range []string{
		"bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t",                 // the test network
		"pref:pr6m7j9njldwwzlg9v7v53unlr4jkmx6ey65nvtks5",                    // another prefix
		"prefix:0r6m7j9njldwwzlg9v7v53unlr4jkmx6ey3qnjwsrf",                  // an undefined type
		"bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg3",             // one character changed
		"bitcoincash:QR6M7J9NJLDWWZLG9V7V53UNLR4JKMX6EYLEP8EKG2",             // mixed case
		"bitcoincash:bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2", // a double prefix
		"bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg",              // one character short
	} {
		assert.ErrorIs(t, Check(BitcoinCash, s), ErrInvalid, s)
	}
}

// EIP-55's own examples: all upper case, all lower case and the
// checksummed ones pass; one letter in the other case fails.
func TestEIP55Examples(t *testing.T) {
	for _, s := range []string{
		"0x52908400098527886E0F7030069857D2E4169EE7",
		"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77",
		"0x27b1fdb04752bbc536007a920d24acb045561c26",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		assert.NoError(t, Check(EVM, s), s)
	}
	for _, s := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		assert.Equal(t, s, EIP55(strings.ToLower(s)))
		// Flip the case of each letter in turn: always refused.
		for i := 2; i < len(s); i++ {
			c := s[i]
			var f byte
			switch {
			case c >= 'a' && c <= 'f':
				f = c - 'a' + 'A'
			case c >= 'A' && c <= 'F':
				f = c - 'A' + 'a'
			default:
				continue
			}
			bad := s[:i] + string(f) + s[i+1:]
			assert.ErrorIs(t, Check(EVM, bad), ErrInvalid, bad)
		}
	}
	for _, s := range []string{
		"0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED",  // 0X
		"5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",    // no 0x
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",   // 39 digits
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd", // 41
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg",  // not hex
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed ", // a space
	} {
		assert.ErrorIs(t, Check(EVM, s), ErrInvalid, s)
	}
}

// Base58Check families: the version byte says the network, the checksum
// catches a changed character.
func TestBase58Families(t *testing.T) {
	hash, _ := hex.DecodeString("f5bf48b397dae70be82b3cca4793f8eb2b6cdac9")
	cases := []struct {
		f        Family
		versions []byte
		first    string
	}{
		{Bitcoin, []byte{0x00, 0x05}, "13"},
		{Litecoin, []byte{0x30, 0x32, 0x05}, "LM3"},
		{Dogecoin, []byte{0x1e, 0x16}, "D9A"},
		{Tron, []byte{0x41}, "T"},
		{BitcoinCash, []byte{0x00, 0x05}, "13"},
	}
	for _, c := range cases {
		for _, v := range c.versions {
			s := Base58Check(v, hash)
			assert.NoError(t, Check(c.f, s), "%s %s", c.f, s)
			assert.Contains(t, c.first, s[:1], "%s %s", c.f, s)
			// Every single-character substitution is caught.
			for i := 0; i < len(s); i++ {
				for _, r := range []byte{'2', 'z'} {
					if s[i] == r {
						continue
					}
					bad := s[:i] + string(r) + s[i+1:]
					assert.ErrorIs(t, Check(c.f, bad), ErrInvalid, bad)
				}
			}
		}
	}
	// Well-known addresses.
	for s, f := range map[string]Family{
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2": Bitcoin,
		"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy": Bitcoin,
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa": Bitcoin,
		"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t": Tron,
		"DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L": Dogecoin,
	} {
		assert.NoError(t, Check(f, s), s)
	}
	// Another network's version byte, with a valid checksum.
	assert.ErrorContains(t, Check(Bitcoin, Base58Check(0x41, hash)), "Tron")
	assert.ErrorContains(t, Check(Tron, Base58Check(0x00, hash)), "Bitcoin")
	assert.ErrorContains(t, Check(Dogecoin, Base58Check(0x30, hash)), "Litecoin")
	assert.ErrorContains(t, Check(Litecoin, Segwit("bc", 0, hash)), "Bitcoin")
	assert.ErrorContains(t, Check(Bitcoin, Segwit("ltc", 0, hash)), "Litecoin")
	assert.ErrorContains(t, Check(Bitcoin, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"), "Tron")
	assert.ErrorContains(t, Check(Tron, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), "EVM")
	assert.ErrorContains(t, Check(EVM, "bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2"), "Bitcoin Cash")
}

// What no address contains is refused before decoding: white space,
// controls, non-ASCII look-alikes, nothing, too much.
func TestTextNoAddressHas(t *testing.T) {
	good := "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
	for name, s := range map[string]string{
		"empty":                 "",
		"leading space":         " " + good,
		"trailing newline":      good + "\n",
		"inner tab":             good[:10] + "\t" + good[10:],
		"NUL":                   good + "\x00",
		"no-break space":        good + "\u00a0",
		"Cyrillic а for a":      strings.Replace(good, "a", "а", 1),
		"fullwidth digit":       strings.Replace(good, "0", "０", 1),
		"Kelvin sign":           "0x" + strings.Repeat("\u212a", 20),
		"zero-width space":      good[:5] + "\u200b" + good[5:],
		"right-to-left mark":    "\u200f" + good,
		"too long":              strings.Repeat("q", 200),
		"bidi override in EVM":  "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed\u202e",
		"Greek omicron in Tron": strings.Replace("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "o", "ο", 1),
	} {
		for _, f := range families {
			assert.ErrorIs(t, Check(f, s), ErrInvalid, "%s, %s", name, f)
		}
	}
	assert.ErrorIs(t, Check(Unknown, good), ErrUnknownFamily)
}

func TestFamilyOf(t *testing.T) {
	for tk, f := range map[[2]string]Family{
		{"", "btc"}: Bitcoin, {"", "ltc"}: Litecoin, {"", "bch"}: BitcoinCash, {"", "doge"}: Dogecoin,
		{"", "eth"}: EVM, {"", "bnb"}: EVM, {"", "trx"}: Tron, {"trc20", "usdt"}: Tron,
		{"erc20", "usdt"}: EVM, {"bep20", "usdc"}: EVM, {"polygon", "usdt"}: EVM,
		{"", "xmr"}: Unknown, {"sol", "usdt"}: Unknown, {"", "usdt"}: Unknown,
	} {
		assert.Equal(t, f, FamilyOf(tk[0], tk[1]), "%v", tk)
	}
}

func TestErrorsSayWhy(t *testing.T) {
	err := Check(Bitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalid))
	assert.Contains(t, err.Error(), "checksum")
}
