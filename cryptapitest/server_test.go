package cryptapitest_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listen opens a listener on a free port of 127.0.0.1.
func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return l
}

// assertClosed checks that l no longer accepts connections.
func assertClosed(t *testing.T, l net.Listener) {
	t.Helper()
	_, err := l.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
}

func TestWithListenerServesOnIt(t *testing.T) {
	ctx := ctxT(t)
	l := listen(t)
	s := newServer(t, cryptapitest.WithListener(l), cryptapitest.WithAPIKey("k"))
	assert.Equal(t, "http://"+l.Addr().String(), s.URL())

	c := newClient(t, s, cryptapi.WithAPIKey("k"))
	info, err := c.Info(ctx, "btc", nil)
	require.NoError(t, err)
	assert.Equal(t, "Bitcoin", info.Coin)
	co, err := c.CreateCheckout(ctx, &cryptapi.CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: dec("10")})
	require.NoError(t, err)
	assert.Equal(t, "http://"+l.Addr().String()+"/pay/"+co.PaymentID+"/", co.PaymentURL)
	require.Len(t, s.Requests(), 2)

	s.Close()
	assertClosed(t, l)
}

func TestWithListenerErrorsCloseTheListeners(t *testing.T) {
	assert.Panics(t, func() { cryptapitest.NewServer(cryptapitest.WithListener(nil)) })

	l1, l2 := listen(t), listen(t)
	assert.PanicsWithValue(t, "cryptapitest: WithListener: more than one listener", func() {
		cryptapitest.NewServer(cryptapitest.WithListener(l1), cryptapitest.WithListener(l2))
	})
	assertClosed(t, l1)
	assertClosed(t, l2)

	l3 := listen(t)
	assert.Panics(t, func() { cryptapitest.NewServer(cryptapitest.WithListener(l3), cryptapitest.WithAPIKey("")) })
	assertClosed(t, l3)
}

func TestHandlerServedFromAnotherServer(t *testing.T) {
	ctx := ctxT(t)
	s := newServer(t, cryptapitest.WithAPIKey("k"))
	shop := newMerchant(t)
	outer := httptest.NewServer(s.Handler())
	defer outer.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, err := cryptapi.New(cryptapi.WithBaseURL(outer.URL), cryptapi.WithAPIKey("k"), cryptapi.WithoutRetries(),
		cryptapi.WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)

	d, err := c.CreateDeposit(ctx, &cryptapi.DepositOptions{NotifyURL: shop.URL + "/ipn"})
	require.NoError(t, err)
	assert.Equal(t, outer.URL+"/pay/"+d.PaymentID+"/", d.PaymentURL, "the page is where the client reached the fake")
	assert.False(t, strings.HasPrefix(d.PaymentURL, s.URL()))
	resp, err := tr.RoundTrip(mustRequest(t, d.PaymentURL))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the hosted page is served there")

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/deposit/request/", reqs[0].Path)
	assert.Equal(t, "/pay/"+d.PaymentID+"/", reqs[1].Path)

	// Deliveries go out as from the fake's own address.
	require.NoError(t, s.PayDeposit(d.PaymentID, "btc", dec("0.01")))
	require.NoError(t, s.Flush(ctx))
	require.Len(t, shop.received(), 1)
	assert.Equal(t, d.PaymentURL, shop.received()[0].Query.Get("payment_url"))

	s.Close()
	resp, err = tr.RoundTrip(mustRequest(t, outer.URL+"/btc/info/?apikey=k"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "closed")
	_, err = c.Info(ctx, "btc", nil)
	apiError(t, err, http.StatusServiceUnavailable)
	assert.Len(t, s.Requests(), 2, "answered after Close: not recorded")
}

func mustRequest(t *testing.T, u string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	return r
}
