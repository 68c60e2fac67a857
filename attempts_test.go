package cryptapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorsCountAttempts: a failed call says how many times it was sent,
// retries included, for every operation, and the failure itself is still
// matched through the count.
func TestErrorsCountAttempts(t *testing.T) {
	const retryMax = 3
	for _, op := range allOps() {
		t.Run(op.name+"/503", func(t *testing.T) {
			c, api := setupKey(t, WithRetry(retryMax, 0, 0))
			api.handle(op.route, serveBody(http.StatusServiceUnavailable, "application/json", []byte(`{"status":"error","error":"busy"}`)))
			_, err := op.call(context.Background(), c)
			var ae *AttemptsError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, api.count(), ae.Attempts, "attempts counted = requests received")
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
			if op.retried {
				assert.Equal(t, retryMax+1, ae.Attempts)
				assert.Contains(t, err.Error(), fmt.Sprintf("(after %d attempts)", retryMax+1))
			} else {
				assert.Equal(t, 1, ae.Attempts)
				assert.NotContains(t, err.Error(), "attempts")
			}
		})
		t.Run(op.name+"/hang-up", func(t *testing.T) {
			c, api := setupKey(t, WithRetry(retryMax, 0, 0))
			api.handle(op.route, dropConnection)
			_, err := op.call(context.Background(), c)
			var ae *AttemptsError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, api.count(), ae.Attempts)
			var ue *url.Error
			assert.ErrorAs(t, err, &ue)
		})
	}
}

// TestRefusedCallsAreNotCounted: a request refused before the network was
// never sent, so its error carries no attempt count.
func TestRefusedCallsAreNotCounted(t *testing.T) {
	c, api := setup(t)
	_, err := c.Info(context.Background(), "../x", nil)
	require.ErrorIs(t, err, ErrInvalidTicker)
	var ae *AttemptsError
	assert.False(t, errors.As(err, &ae), "refused before sending: %v", err)
	assert.Equal(t, 0, api.count())
}
