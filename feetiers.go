package cryptapi

import (
	"context"
	"encoding/json"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// FeeTier is one step of the service's volume-based fee schedule: from
// Minimum (a monthly volume in USD) up, the fee is FeePercent.
type FeeTier struct {
	// Minimum is the volume from which the tier applies.
	Minimum decimal.Decimal
	// FeePercent is the tier's fee in percent.
	FeePercent decimal.Decimal
}

// UnmarshalJSON decodes a tier, numbers or text alike; the percentage
// is read from fee_percent or fee.
func (f *FeeTier) UnmarshalJSON(b []byte) error {
	var w struct {
		Minimum    wire.Amount  `json:"minimum"`
		FeePercent *wire.Amount `json:"fee_percent"`
		Fee        wire.Amount  `json:"fee"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*f = FeeTier{Minimum: w.Minimum.D(), FeePercent: w.Fee.D()}
	if w.FeePercent != nil {
		f.FeePercent = w.FeePercent.D()
	}
	return nil
}

type feeTiersAnswer struct {
	Status   string
	FeeTiers []FeeTier
}

func (a *feeTiersAnswer) UnmarshalJSON(b []byte) error {
	var w struct {
		Status   json.RawMessage `json:"status"`
		FeeTiers json.RawMessage `json:"fee_tiers"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if len(w.Status) > 0 {
		a.Status, _ = wire.DecodeString(w.Status)
	}
	if len(w.FeeTiers) == 0 || string(w.FeeTiers) == "null" {
		return nil
	}
	if w.FeeTiers[0] == '{' {
		// A map of tiers keyed by name or index.
		var m map[string]FeeTier
		if err := json.Unmarshal(w.FeeTiers, &m); err != nil {
			return err
		}
		for _, t := range m {
			a.FeeTiers = append(a.FeeTiers, t)
		}
		sortTiers(a.FeeTiers)
		return nil
	}
	if err := json.Unmarshal(w.FeeTiers, &a.FeeTiers); err != nil {
		return err
	}
	sortTiers(a.FeeTiers)
	return nil
}

func (a *feeTiersAnswer) apiStatus() string { return a.Status }

func sortTiers(ts []FeeTier) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Minimum.LessThan(ts[j-1].Minimum); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// FeeTiers returns the fee schedule the all-coins answer carries under
// fee_tiers, ordered by Minimum; empty when the service sends none. It
// reads /info/ without prices.
func (c *Client) FeeTiers(ctx context.Context) ([]FeeTier, error) {
	out, err := call[feeTiersAnswer](ctx, c, &request{
		op:    "fee tiers",
		path:  "info/",
		query: (&InfoOptions{NoPrices: true}).query(),
		retry: true,
	})
	if err != nil {
		return nil, err
	}
	return out.FeeTiers, nil
}
