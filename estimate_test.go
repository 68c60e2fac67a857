package cryptapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEstimate(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/estimate/", serveFixture(t, "estimate.json"))
		est, err := c.Estimate(context.Background(), "btc", nil)
		require.NoError(t, err)
		q := api.last().Query
		assert.False(t, q.Has("addresses"), "the service default of one address")
		assert.False(t, q.Has("priority"))
		assertDec(t, "0.00004237", est.EstimatedCost)
		assert.Len(t, est.EstimatedCostCurrency, 6)
		assertDec(t, "2.85", est.EstimatedCostCurrency["USD"])
		assertDec(t, "444.12", est.EstimatedCostCurrency["JPY"])
		assert.Equal(t, "success", est.Status)
	})
}

func TestEstimateOptions(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /bep20/usdt/estimate/", serveJSON(`{"status":"success","estimated_cost":"1.2E-4"}`))
	est, err := c.Estimate(context.Background(), "bep20/usdt", &EstimateOptions{Addresses: 3, Priority: "fast"})
	require.NoError(t, err)
	q := api.last().Query
	assert.Equal(t, "3", q.Get("addresses"))
	assert.Equal(t, "fast", q.Get("priority"))
	assertDec(t, "0.00012", est.EstimatedCost)
	assert.NotNil(t, est.EstimatedCostCurrency)
	assert.Empty(t, est.EstimatedCostCurrency)
}

func TestEstimateValidationBeforeNetwork(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/estimate/", serveFixture(t, "estimate.json"))
	for _, n := range []int{-1, MaxOutputs + 1} {
		est, err := c.Estimate(context.Background(), "btc", &EstimateOptions{Addresses: n})
		assert.ErrorIs(t, err, ErrInvalidOption, "addresses %d", n)
		assert.Nil(t, est)
	}
	assert.Zero(t, api.count())
	_, err := c.Estimate(context.Background(), "btc", &EstimateOptions{Addresses: MaxOutputs})
	require.NoError(t, err)
	assert.Equal(t, 1, api.count())
}

func TestEstimateErrorAnswer(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/estimate/", serveJSON(`{"status":"error","error":"The request could not be processed, try again later"}`))
	_, err := c.Estimate(context.Background(), "btc", nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, ae.Message, "try again later")
}
