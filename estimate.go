package cryptapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// EstimateOptions are the parameters of Estimate.
type EstimateOptions struct {
	// Addresses is the number of forwarding addresses; it should match the
	// create call. Zero means 1.
	Addresses int `url:"addresses,omitempty"`
	// Priority is the fee level, as in CreateOptions.Priority.
	Priority string `url:"priority,omitempty"`
}

// Estimate is the answer of Estimate: the blockchain cost of forwarding,
// without the service's own fee. It is an estimate only.
type Estimate struct {
	// EstimatedCost is in coin units.
	EstimatedCost decimal.Decimal
	// EstimatedCostCurrency is the same cost in fiat currencies.
	EstimatedCostCurrency map[string]decimal.Decimal
	// Status is "success".
	Status string
}

// UnmarshalJSON decodes the estimate answer.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var w struct {
		EstimatedCost wire.Amount    `json:"estimated_cost"`
		Currency      wire.AmountMap `json:"estimated_cost_currency"`
		Status        wire.String    `json:"status"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Estimate{EstimatedCost: w.EstimatedCost.D(), EstimatedCostCurrency: w.Currency, Status: string(w.Status)}
	if e.EstimatedCostCurrency == nil {
		e.EstimatedCostCurrency = map[string]decimal.Decimal{}
	}
	return nil
}

func (e *Estimate) apiStatus() string { return e.Status }

// Estimate returns the estimated blockchain fee of forwarding a payment of
// ticker to o.Addresses destinations. o may be nil.
func (c *Client) Estimate(ctx context.Context, ticker string, o *EstimateOptions) (*Estimate, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if o != nil && (o.Addresses < 0 || o.Addresses > MaxOutputs) {
		return nil, fmt.Errorf("%w: addresses must be between 1 and %d (0 means 1)", ErrInvalidOption, MaxOutputs)
	}
	return call[Estimate](ctx, c, &request{
		op:    "estimate",
		path:  t.Path() + "/estimate/",
		opts:  o,
		retry: true,
	})
}
