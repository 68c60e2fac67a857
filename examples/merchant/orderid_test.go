package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every order has the shop's order number: the one the request gives, or
// one the shop makes, different for every order. It is in the answer, on
// the invoice, and in the log line of every change. An order number that
// is not a plain identifier is refused before any address exists.
func TestEveryOrderHasAnOrderNumber(t *testing.T) {
	e := setup(t, modes[0], "")
	given := e.createOrder("amount=0.001&order_id=1001").Invoice
	assert.Equal(t, "1001", given.OrderID)
	assert.Equal(t, "1001", e.order(given.ID).OrderID)

	seen := map[string]bool{}
	for range 3 {
		made := e.createOrder("amount=0.001").Invoice
		require.NotEmpty(t, made.OrderID)
		assert.False(t, seen[made.OrderID], "a new number per order")
		seen[made.OrderID] = true
		assert.Equal(t, made.OrderID, e.order(made.ID).OrderID)
	}

	tx := e.pay(given.AddressIn, dec("0.001"))
	e.confirm(tx)
	assert.Contains(t, e.logs.String(), "order=1001", "the change log names the order")

	creates := e.creates()
	for _, bad := range []string{"\x00", "a b", "1001\n", "\xff", strings.Repeat("9", 65), "<script>", "é"} {
		status, body := e.do(http.MethodPost, "/orders?amount=0.001&order_id="+url.QueryEscape(bad))
		assert.Equal(t, http.StatusBadRequest, status, "%q: %s", bad, body)
		var answer map[string]string
		require.NoError(t, json.Unmarshal(body, &answer))
		assert.Contains(t, answer["error"], "order_id", "%q", bad)
	}
	assert.Equal(t, creates, e.creates(), "no address for a refused order")
}
