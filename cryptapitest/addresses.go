package cryptapitest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

const (
	bech32Chars = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	base58Chars = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	hexChars    = "0123456789abcdef"
)

const (
	b32 = "[" + bech32Chars + "]"
	b58 = "[" + base58Chars + "]"
)

// addressPatterns are the formats accepted per chain. They check shape
// only (no checksums), which is what a test needs to catch an address of
// the wrong coin.
var addressPatterns = map[string]*regexp.Regexp{
	ChainBitcoin:     regexp.MustCompile(`^(bc1` + b32 + `{39,59}|[13]` + b58 + `{25,34})$`),
	ChainLitecoin:    regexp.MustCompile(`^(ltc1` + b32 + `{39,59}|[LM3]` + b58 + `{26,33})$`),
	ChainBitcoinCash: regexp.MustCompile(`^((bitcoincash:)?[qp]` + b32 + `{41}|1` + b58 + `{25,33})$`),
	ChainEthereum:    regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`),
	ChainTron:        regexp.MustCompile(`^T` + b58 + `{33}$`),
}

// ValidAddress reports whether addr has the format of an address of the
// coin of ticker, by the rules the server applies to destinations and QR
// requests.
func (s *Server) ValidAddress(ticker, addr string) bool {
	c, err := s.coinFor(ticker)
	if err != nil {
		return false
	}
	return validAddress(c.Chain, addr)
}

func validAddress(chain, addr string) bool {
	p, ok := addressPatterns[chain]
	return ok && p.MatchString(addr)
}

// stream returns n deterministic pseudo-random bytes for the label and
// the next value of the server's counter. s.mu must be held.
func (s *Server) streamLocked(label string, n int) []byte {
	s.counter++
	var seed [16]byte
	binary.BigEndian.PutUint64(seed[:8], s.seed)
	binary.BigEndian.PutUint64(seed[8:], s.counter)
	out := make([]byte, 0, n+sha256.Size)
	for block := uint32(0); len(out) < n; block++ {
		h := sha256.New()
		h.Write(seed[:])
		h.Write([]byte(label))
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], block)
		h.Write(b[:])
		out = h.Sum(out)
	}
	return out[:n]
}

func pick(alphabet string, raw []byte) string {
	var b strings.Builder
	for _, x := range raw {
		b.WriteByte(alphabet[int(x)%len(alphabet)])
	}
	return b.String()
}

// newAddressLocked generates a fresh address of the chain: bc1q + 38
// bech32 characters (42 in all), ltc1q + 38, bitcoincash:q + 41,
// 0x + 40 hex digits, T + 33 base58 characters.
func (s *Server) newAddressLocked(chain string) string {
	switch chain {
	case ChainBitcoin:
		return "bc1q" + pick(bech32Chars, s.streamLocked("address", 38))
	case ChainLitecoin:
		return "ltc1q" + pick(bech32Chars, s.streamLocked("address", 38))
	case ChainBitcoinCash:
		return "bitcoincash:q" + pick(bech32Chars, s.streamLocked("address", 41))
	case ChainEthereum:
		return "0x" + pick(hexChars, s.streamLocked("address", 40))
	case ChainTron:
		return "T" + pick(base58Chars, s.streamLocked("address", 33))
	}
	panic("cryptapitest: unknown chain " + chain)
}

// newTxIDLocked generates a transaction hash: 64 hex digits, with 0x on
// Ethereum-like chains.
func (s *Server) newTxIDLocked(chain string) string {
	h := hex.EncodeToString(s.streamLocked("txid", 32))
	if chain == ChainEthereum {
		return "0x" + h
	}
	return h
}

// newUUIDLocked generates a version 4 UUID.
func (s *Server) newUUIDLocked() string {
	b := s.streamLocked("uuid", 16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newTokenLocked generates an opaque identifier of n hex digits.
func (s *Server) newTokenLocked(label string, n int) string {
	return hex.EncodeToString(s.streamLocked(label, (n+1)/2))[:n]
}

// output is one destination and its share.
type output struct {
	addr  string
	share decimal.Decimal
}

// maxOutputs is the largest number of destinations of one address.
const maxOutputs = 20

// parseOutputs reads the address parameter: one address, or
// <share>@<address>|... with shares that add up to 1.
func parseOutputs(chain, s string) ([]output, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty address")
	}
	if !strings.ContainsAny(s, "@|") {
		if !validAddress(chain, s) {
			return nil, errors.New("invalid address for this coin")
		}
		return []output{{addr: s, share: decimal.NewFromInt(1)}}, nil
	}
	parts := strings.Split(s, "|")
	if len(parts) > maxOutputs {
		return nil, fmt.Errorf("at most %d addresses", maxOutputs)
	}
	outs := make([]output, 0, len(parts))
	seen := map[string]bool{}
	sum := decimal.Zero
	for _, p := range parts {
		share, addr, ok := strings.Cut(strings.TrimSpace(p), "@")
		if !ok {
			return nil, errors.New("each address must be written <share>@<address>")
		}
		v, err := decimal.NewFromString(share)
		if err != nil || !v.IsPositive() || v.GreaterThan(decimal.NewFromInt(1)) {
			return nil, errors.New("invalid share")
		}
		if !validAddress(chain, addr) {
			return nil, errors.New("invalid address for this coin")
		}
		if seen[addr] {
			return nil, errors.New("repeated address")
		}
		seen[addr] = true
		sum = sum.Add(v)
		outs = append(outs, output{addr: addr, share: v})
	}
	if !sum.Equal(decimal.NewFromInt(1)) {
		return nil, errors.New("shares must add up to 1")
	}
	return outs, nil
}

// addressOutText writes destinations as the service does: the address for
// one, {"addr": 0.5, "addr2": 0.5} for several.
func addressOutText(outs []output) string {
	if len(outs) == 1 {
		return outs[0].addr
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, o := range outs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", o.addr, o.share.String())
	}
	b.WriteByte('}')
	return b.String()
}
