package cryptapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// MaxOutputs is the largest number of destinations in one create call.
const MaxOutputs = 20

// Output is one destination of forwarded funds and its share of them.
type Output struct {
	// Address is the destination address, valid for the ticker.
	Address string
	// Share is the fraction of forwarded funds, for example 0.5.
	Share decimal.Decimal
}

// addressOutText returns address_out as text whether the service sent a
// string or an object.
func addressOutText(raw json.RawMessage) string {
	if s, err := wire.DecodeString(raw); err == nil {
		return s
	}
	return string(raw)
}

// shareOne is the share of a single destination. A Decimal is an
// immutable value, so every Output may hold this one.
var shareOne = decimal.NewFromInt(1)

// ValidateDestination checks a destination of ticker's coin as
// CreateAddress and RequestPayment do before anything is sent: address or
// outputs (not both; neither is not an error here), each address of the
// coin's network when the SDK knows its format (see ValidateAddress; an
// address of another coin is the service's to judge), at most MaxOutputs
// outputs, no address twice, shares in (0, 1] adding up to 1. Surrounding
// white space of an address is ignored, as the create calls ignore it.
// The error matches ErrInvalidOutputs, and ErrInvalidAddress for an
// address that is not one.
func ValidateDestination(ticker, address string, outputs []Output) error {
	t, err := parseTicker(ticker)
	if err != nil {
		return err
	}
	_, err = destination(t, address, outputs)
	return err
}

// destination encodes Address or Outputs as the service's address
// parameter.
func destination(t ticker.Ticker, addr string, outs []Output) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr != "" && len(outs) > 0 {
		return "", fmt.Errorf("%w: set Address or Outputs, not both", ErrInvalidOutputs)
	}
	if addr != "" {
		if err := checkDestination(t, addr); err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalidOutputs, err)
		}
		return addr, nil
	}
	if len(outs) == 0 {
		return "", nil
	}
	if len(outs) > MaxOutputs {
		return "", fmt.Errorf("%w: %d destinations, at most %d", ErrInvalidOutputs, len(outs), MaxOutputs)
	}
	sum := decimal.Zero
	seen := make(map[string]bool, len(outs))
	parts := make([]string, 0, len(outs))
	for i, o := range outs {
		a := strings.TrimSpace(o.Address)
		if a == "" {
			return "", fmt.Errorf("%w: output %d has an empty address", ErrInvalidOutputs, i)
		}
		if err := checkDestination(t, a); err != nil {
			return "", fmt.Errorf("%w: output %d: %w", ErrInvalidOutputs, i, err)
		}
		if seen[a] {
			return "", fmt.Errorf("%w: output %d repeats an address", ErrInvalidOutputs, i)
		}
		seen[a] = true
		if !o.Share.IsPositive() || o.Share.GreaterThan(shareOne) {
			return "", fmt.Errorf("%w: output %d share must be in (0, 1]", ErrInvalidOutputs, i)
		}
		sum = sum.Add(o.Share)
		parts = append(parts, o.Share.String()+"@"+a)
	}
	if !sum.Equal(shareOne) {
		return "", fmt.Errorf("%w: shares add up to %s, not 1", ErrInvalidOutputs, sum.String())
	}
	return strings.Join(parts, "|"), nil
}

// validAddressText rejects what no blockchain address contains: nothing,
// white space, control characters and the separators of the outputs form.
// Whether it is an address of its coin's network is checkDestination's
// question (for the formats the SDK knows) or the service's.
func validAddressText(a string) bool {
	if a == "" || len(a) > 128 {
		return false
	}
	for _, r := range a {
		if r <= ' ' || r == 0x7f || r == '|' || r == '@' || r == '&' || r == '#' || r == '?' || r == '/' || r == '\\' || r == '"' || r == '\'' {
			return false
		}
	}
	return true
}

// ParseAddressOut parses address_out text: a single address (share 1),
// the service's text map {"addr": 0.7, "addr2": 0.3} (also with single
// quotes), or the <share>@<address>|... form. The order of the text is
// kept. An error means the text is none of these.
func ParseAddressOut(s string) ([]Output, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty address_out", ErrInvalidOutputs)
	}
	switch {
	case strings.HasPrefix(s, "{"):
		return parseOutputMap(s)
	case strings.Contains(s, "@"):
		return parseOutputPipes(s)
	case validAddressText(s):
		return []Output{{Address: s, Share: shareOne}}, nil
	}
	return nil, fmt.Errorf("%w: unrecognised address_out", ErrInvalidOutputs)
}

func parseOutputsLenient(s string) []Output {
	outs, err := ParseAddressOut(s)
	if err != nil {
		return nil
	}
	return outs
}

func parseOutputMap(s string) ([]Output, error) {
	if !strings.Contains(s, `"`) {
		s = strings.ReplaceAll(s, "'", `"`)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: address_out is not a map", ErrInvalidOutputs)
	}
	var outs []Output
	for dec.More() {
		if len(outs) >= 10*MaxOutputs {
			return nil, fmt.Errorf("%w: too many outputs", ErrInvalidOutputs)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: malformed address_out", ErrInvalidOutputs)
		}
		addr, ok := tok.(string)
		if !ok || !validAddressText(addr) {
			return nil, fmt.Errorf("%w: malformed address in address_out", ErrInvalidOutputs)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: malformed share in address_out", ErrInvalidOutputs)
		}
		share, err := wire.DecodeDecimal(raw)
		if err != nil || !share.IsPositive() {
			return nil, fmt.Errorf("%w: malformed share in address_out", ErrInvalidOutputs)
		}
		outs = append(outs, Output{Address: addr, Share: share})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("%w: malformed address_out", ErrInvalidOutputs)
	}
	if strings.TrimSpace(s[dec.InputOffset():]) != "" {
		return nil, fmt.Errorf("%w: trailing data in address_out", ErrInvalidOutputs)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%w: empty address_out map", ErrInvalidOutputs)
	}
	return outs, nil
}

func parseOutputPipes(s string) ([]Output, error) {
	parts := strings.Split(s, "|")
	if len(parts) > 10*MaxOutputs {
		return nil, fmt.Errorf("%w: too many outputs", ErrInvalidOutputs)
	}
	outs := make([]Output, 0, len(parts))
	for _, p := range parts {
		share, addr, ok := strings.Cut(strings.TrimSpace(p), "@")
		if !ok || !validAddressText(addr) {
			return nil, fmt.Errorf("%w: malformed output", ErrInvalidOutputs)
		}
		d, err := wire.ParseDecimal(share)
		if err != nil || !d.IsPositive() {
			return nil, fmt.Errorf("%w: malformed share", ErrInvalidOutputs)
		}
		outs = append(outs, Output{Address: addr, Share: d})
	}
	return outs, nil
}
