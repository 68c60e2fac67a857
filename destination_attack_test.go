package cryptapi_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

const (
	shopWallet     = "bc1q76al2kqp4eqlmxwnk6ft806ec8vkcaxdnuwrlz"
	attackerWallet = "bc1qqu3cew50zusdwpjlxkqts3n6vue0y83enflln5"
)

// TestGuessedCallbackURLRegisteredFirstIsRefused plays the attack on the
// keyless form: the shop's callback URLs are guessable (an order number
// alone), so an attacker registers the shop's next one with their own
// wallet before the shop does. The service binds a callback URL to its
// first destination, so the shop's CreateAddress and RequestPayment get
// the attacker's address_in back; both must fail with a
// *DestinationMismatchError naming the attacker's destination, and hand
// out no address. A callback URL with a nonce the attacker cannot guess
// gets the shop's own destination.
func TestGuessedCallbackURLRegisteredFirstIsRefused(t *testing.T) {
	ctx := context.Background()
	svc := cryptapitest.NewServer()
	t.Cleanup(svc.Close)
	newClient := func() *cryptapi.Client {
		c, err := cryptapi.New(cryptapi.WithBaseURL(svc.URL()), cryptapi.WithRetry(0, 0, 0))
		require.NoError(t, err)
		return c
	}
	shop, attacker := newClient(), newClient()
	next := cryptapi.CreateOptions{Callback: "https://shop.example/callback", Params: url.Values{"order_id": {"1001"}}}

	// The attacker goes first, with the shop's callback URL.
	stolen := next
	stolen.Address = attackerWallet
	trap, err := attacker.CreateAddress(ctx, "btc", &stolen)
	require.NoError(t, err)
	require.Equal(t, attackerWallet, trap.AddressOut)

	mine := next
	mine.Address = shopWallet
	addr, err := shop.CreateAddress(ctx, "btc", &mine)
	assert.Nil(t, addr, "the attacker's address is not handed out")
	var dm *cryptapi.DestinationMismatchError
	require.ErrorAs(t, err, &dm)
	assert.ErrorIs(t, err, cryptapi.ErrDestinationMismatch)
	assert.Equal(t, []cryptapi.Output{{Address: shopWallet, Share: decimal.NewFromInt(1)}}, dm.AskedOutputs)
	assert.Equal(t, attackerWallet, dm.BoundAddressOut)
	require.Len(t, dm.BoundOutputs, 1)
	assert.Equal(t, attackerWallet, dm.BoundOutputs[0].Address)
	assert.Equal(t, "https://shop.example/callback?order_id=1001", dm.AskedCallbackURL)
	assert.Equal(t, dm.AskedCallbackURL, dm.BoundCallbackURL)

	pr, err := shop.RequestPayment(ctx, "btc", &cryptapi.PaymentRequestOptions{CreateOptions: mine, Amount: decimal.RequireFromString("0.01")})
	assert.Nil(t, pr, "no payment request to the attacker's address")
	require.ErrorAs(t, err, &dm)
	assert.Equal(t, attackerWallet, dm.BoundAddressOut)
	for _, r := range svc.Requests() {
		assert.NotEqual(t, "/btc/qrcode/", r.Path, "no payment URI is asked for the attacker's address")
	}

	// A nonce the attacker cannot guess makes the URL the shop's own.
	mine.Params = url.Values{"order_id": {"1001"}, "nonce": {cryptapi.NewNonce()}}
	pr, err = shop.RequestPayment(ctx, "btc", &cryptapi.PaymentRequestOptions{CreateOptions: mine, Amount: decimal.RequireFromString("0.01")})
	require.NoError(t, err)
	assert.Equal(t, shopWallet, pr.Address.AddressOut)
	assert.NotEqual(t, trap.AddressIn, pr.Address.AddressIn)
}
