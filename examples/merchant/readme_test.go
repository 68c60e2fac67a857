package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// readmeMerchant is the README's walk through examples/merchant on the
// simulator: the order it posts, and what it says the order then shows.
var readmeMerchant = regexp.MustCompile("(?s)`curl -X POST '(localhost:8080/orders\\?[^']*)'`.*?" +
	"`cryptapi sim pay -ticker (\\S+) -address-in <address_in> -amount (\\S+)`.*?" +
	"`curl localhost:8080/orders/<id>`.*? says `([^`]+)`")

// TestReadmeMerchantWalkThrough does what the README tells a new user to
// do with examples/merchant against the simulator, with the README's own
// request and amounts, and checks that the order then shows what the
// README says it shows.
func TestReadmeMerchantWalkThrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := readmeMerchant.FindStringSubmatch(string(readme))
	require.NotNil(t, m, "the README's merchant walk-through")
	post, ticker, amount, says := m[1], m[2], m[3], m[4]

	// cryptapi sim serve -api-key demo-key
	sim := cryptapitest.NewServer(cryptapitest.WithAPIKey("demo-key"))
	defer sim.Close()
	// CRYPTAPI_API_KEY=demo-key go run ./examples/merchant -base-url ...
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-base-url", sim.URL(), "-addr", addr}, func(k string) string {
			return map[string]string{"CRYPTAPI_API_KEY": "demo-key"}[k]
		})
	}()
	defer func() { cancel(); assert.NoError(t, <-done) }()
	base := "http://" + addr
	var resp *http.Response
	for i := 0; i < 200; i++ { // until it listens
		if resp, err = http.Post(base+strings.TrimPrefix(post, "localhost:8080"), "", nil); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the merchant stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
	var order struct {
		ID        string `json:"id"`
		OrderID   string `json:"order_id"`
		AddressIn string `json:"address_in"`
	}
	require.NoError(t, json.Unmarshal(body, &order))
	assert.NotEmpty(t, order.OrderID, "the order has the shop's order number")

	// cryptapi sim pay ... ; cryptapi sim confirm -txid <txid>
	txid, err := sim.Pay(ticker, order.AddressIn, dec(amount))
	require.NoError(t, err)
	require.NoError(t, sim.Confirm(txid, 1))
	require.NoError(t, sim.Flush(ctx))

	// curl localhost:8080/orders/<id>
	resp, err = http.Get(base + "/orders/" + order.ID)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), says, "what the README says the order shows")
}
