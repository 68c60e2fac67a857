package cryptapi

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedirectToUnicodeFoldedHostIsNotFollowed: a redirect to a host
// that equals the base URL's host only under Unicode case folding (the
// Kelvin sign U+212A for "k" in "blockbee") is another host, and is not
// followed with the key. net/http sends such a request with the punycode
// name (api.xn--blocbee-….test) in its Host header, and another
// RoundTripper may resolve it as that name.
func TestRedirectToUnicodeFoldedHostIsNotFollowed(t *testing.T) {
	log := &headerLog{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		if r.Host == "api.blockbee.test:8443" {
			http.Redirect(w, r, "https://api.bloc\u212Abee.test:8443"+r.URL.RequestURI(), http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(`{"status":"error","error":"reached"}`))
	}))
	t.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // every name leads to the test server
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	c, err := New(WithAPIKey(testKey), WithBaseURL("https://api.blockbee.test:8443/api"),
		WithHTTPClient(&http.Client{Transport: tr}), WithoutRetries())
	require.NoError(t, err)
	_, err = c.Info(t.Context(), "btc", nil)
	assert.ErrorIs(t, err, ErrRedirect)
	assert.Equal(t, 1, log.count(), "only the base host was asked")
	assertNoKey(t, leakProbe(c, nil, err, ""))
}
