package callback_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

func TestNewHandlerRequiresAnAddressCheck(t *testing.T) {
	v, err := callback.NewVerifier(callback.WithPublicURL("https://shop.example"))
	require.NoError(t, err)
	fn := func(context.Context, *callback.Payment) error { return nil }

	h, err := callback.NewHandler(v, fn)
	assert.ErrorIs(t, err, callback.ErrAddressCheckRequired)
	assert.ErrorIs(t, err, cryptapi.ErrInvalidOption)
	assert.Nil(t, h)
	h, err = callback.NewHandler(v, fn, callback.WithStore(callback.NewMemoryStore()))
	assert.ErrorIs(t, err, callback.ErrAddressCheckRequired)
	assert.Nil(t, h)

	known := func(context.Context, string) (bool, error) { return true, nil }
	h, err = callback.NewHandler(v, fn, callback.WithAddressCheck(known))
	assert.NoError(t, err)
	assert.NotNil(t, h)
	h, err = callback.NewHandler(v, fn, callback.InsecureSkipAddressCheck())
	assert.NoError(t, err)
	assert.NotNil(t, h)
}

func TestReconcileRequiresAnAddressCheckBeforeTheNetwork(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer srv.Close()
	c, err := cryptapi.New(cryptapi.WithBaseURL(srv.URL), cryptapi.WithoutRetries())
	require.NoError(t, err)
	fn := func(context.Context, *callback.Payment) error { return nil }
	_, err = callback.Reconcile(context.Background(), c, "btc", srv.URL+"/cb", fn, callback.WithStore(callback.NewMemoryStore()))
	assert.ErrorIs(t, err, callback.ErrAddressCheckRequired)
	assert.Zero(t, requests.Load(), "refused before the network")
}

// addressShop is a shop whose orders are keyed by the address it created
// for them.
type addressShop struct {
	mu     sync.Mutex
	orders map[string]string // address_in -> order id
	paid   []string          // order ids, as fn saw them
}

func (s *addressShop) created(addressIn, order string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orders[addressIn] = order
}

func (s *addressShop) knows(_ context.Context, addressIn string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.orders[addressIn]
	return ok, nil
}

func (s *addressShop) fn(_ context.Context, p *callback.Payment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !p.Pending {
		s.paid = append(s.paid, p.Custom.Get("order_id"))
	}
	return nil
}

func (s *addressShop) paidOrders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paid...)
}

// TestAddressCheckStopsAttackersOwnSignedCallbacks runs two attacks end to
// end on the fake service against a shop that takes POST callbacks:
//
//  1. The attacker creates an address forwarding to their own wallet with
//     their own callback URL, pays it, captures the signed POST body and
//     replays it to the shop with the shop's query (?order_id=1001), which
//     the signature does not cover.
//  2. The attacker creates an address with the shop's next callback URL
//     (?order_id=1002) and their own wallet, and pays it: the service
//     delivers a callback the shop never asked for, validly signed.
//
// The default handler, which checks addresses, refuses both before fn. The
// same replay through a handler built with InsecureSkipAddressCheck
// reaches fn as a payment of order 1001: that is what the opt-out gives
// up.
func TestAddressCheckStopsAttackersOwnSignedCallbacks(t *testing.T) {
	ctx := context.Background()
	fake := cryptapitest.NewServer()
	defer fake.Close()
	client, err := cryptapi.New(cryptapi.WithBaseURL(fake.URL()), cryptapi.WithoutRetries())
	require.NoError(t, err)

	shop := &addressShop{orders: map[string]string{}}
	var h http.Handler
	shopSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer shopSrv.Close()
	v, err := callback.NewVerifier(callback.WithPublicKey(fake.PublicKey()), callback.WithPublicURL(shopSrv.URL))
	require.NoError(t, err)
	h, err = callback.NewHandler(v, shop.fn, callback.WithAddressCheck(shop.knows))
	require.NoError(t, err)
	insecure, err := callback.NewHandler(v, shop.fn, callback.InsecureSkipAddressCheck())
	require.NoError(t, err)

	// The shop's own order 1001.
	mine, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shopSrv.URL + "/callback", Params: url.Values{"order_id": {"1001"}},
		Address: "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh", Post: true,
	})
	require.NoError(t, err)
	shop.created(mine.AddressIn, "1001")

	// Attack 1: a callback captured at the attacker's own URL.
	attackerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { callback.WriteOK(w) }))
	defer attackerSrv.Close()
	theirs, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: attackerSrv.URL + "/cb", Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", Post: true,
	})
	require.NoError(t, err)
	txid, err := fake.Pay("btc", theirs.AddressIn, decimal.RequireFromString("0.001"))
	require.NoError(t, err)
	require.NoError(t, fake.Confirm(txid, 1))
	require.NoError(t, fake.Flush(ctx))
	var captured *cryptapitest.Delivery
	for _, d := range fake.Deliveries() {
		if d.Method == http.MethodPost && !d.Pending && bytes.Contains(d.Body, []byte(theirs.AddressIn)) {
			captured = &d
		}
	}
	require.NotNil(t, captured, "the attacker captured a signed callback")

	replay := func(h http.Handler) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/callback?order_id=1001", bytes.NewReader(captured.Body))
		r.Header.Set("Content-Type", captured.Header.Get("Content-Type"))
		r.Header.Set(callback.SignatureHeader, captured.Header.Get(callback.SignatureHeader))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := replay(h)
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.NotContains(t, w.Body.String(), callback.OK)
	assert.Empty(t, shop.paidOrders(), "the replay did not reach fn")

	// Attack 2: an address created first with the shop's callback URL.
	guessed, err := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
		Callback: shopSrv.URL + "/callback", Params: url.Values{"order_id": {"1002"}},
		Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", Post: true,
	})
	require.NoError(t, err)
	txid, err = fake.Pay("btc", guessed.AddressIn, decimal.RequireFromString("0.001"))
	require.NoError(t, err)
	require.NoError(t, fake.Confirm(txid, 1))
	require.NoError(t, fake.Flush(ctx))
	refused := 0
	for _, d := range fake.Deliveries() {
		if bytes.Contains(d.Body, []byte(guessed.AddressIn)) {
			assert.Equal(t, http.StatusForbidden, d.StatusCode)
			assert.False(t, d.OK)
			refused++
		}
	}
	assert.Equal(t, 1, refused, "the service delivered the attacker's callback to the shop")
	assert.Empty(t, shop.paidOrders(), "no order paid by the attacker's address")

	// The shop's own payment still goes through.
	txid, err = fake.Pay("btc", mine.AddressIn, decimal.RequireFromString("0.001"))
	require.NoError(t, err)
	require.NoError(t, fake.Confirm(txid, 1))
	require.NoError(t, fake.Flush(ctx))
	assert.Equal(t, []string{"1001"}, shop.paidOrders())

	// Without the address check, the replay pays order 1001 a second time
	// with money that went to the attacker.
	w = replay(insecure)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, []string{"1001", "1001"}, shop.paidOrders())
}
