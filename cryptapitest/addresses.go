package cryptapitest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/forwardpay/cryptapi-go/internal/address"
)

// families are the address formats of the chains, checked with their
// checksums by the module's one address validator (the one
// cryptapi.ValidateAddress uses).
var families = map[string]address.Family{
	ChainBitcoin:     address.Bitcoin,
	ChainLitecoin:    address.Litecoin,
	ChainBitcoinCash: address.BitcoinCash,
	ChainEthereum:    address.EVM,
	ChainTron:        address.Tron,
}

// ValidAddress reports whether addr is an address of the coin of ticker,
// by the rules the server applies to destinations and QR requests: the
// formats of cryptapi.ValidateAddress, checksums included.
func (s *Server) ValidAddress(ticker, addr string) bool {
	c, err := s.coinFor(ticker)
	if err != nil {
		return false
	}
	return validAddress(c.Chain, addr)
}

func validAddress(chain, addr string) bool {
	f, ok := families[chain]
	return ok && address.Check(f, addr) == nil
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

// newAddressLocked generates a fresh address of the chain, valid with
// its checksum, from 20 deterministic bytes: a P2WPKH bc1q… or ltc1q…, a
// P2PKH bitcoincash:q…, an EIP-55 0x…, a T… of Tron.
func (s *Server) newAddressLocked(chain string) string {
	raw := s.streamLocked("address", 20)
	switch chain {
	case ChainBitcoin:
		return address.Segwit("bc", 0, raw)
	case ChainLitecoin:
		return address.Segwit("ltc", 0, raw)
	case ChainBitcoinCash:
		return address.CashAddr(0, raw)
	case ChainEthereum:
		return address.EIP55(hex.EncodeToString(raw))
	case ChainTron:
		return address.Base58Check(0x41, raw)
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
