package cryptapitest_test

import (
	"crypto/rand"
	"crypto/rsa"
	"github.com/forwardpay/cryptapi-go/callback"
	"net/url"
	"testing"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNonASCIICallbackURLIsSignedAsSent: a callback URL with non-ASCII
// characters goes out escaped, and the signature covers exactly the URL
// the merchant receives (scheme, host and the raw request target), so a
// verifier that rebuilds it from the request accepts it. The logs keep
// the callback URL as it was sent.
func TestNonASCIICallbackURLIsSignedAsSent(t *testing.T) {
	ctx := ctxT(t)
	shop := newMerchant(t)
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	for _, post := range []string{"0", "1"} {
		s := newServer(t, cryptapitest.WithSigningKey(key))
		for _, cb := range []string{
			shop.URL + "/cb/café?name=Zoë&city=Zürich",
			shop.URL + "/cb/ü?q=a%20b&mark=✓",
		} {
			status, body := rawGet(t, s, "/btc/create/?address="+btcDest+"&post="+post+"&callback="+url.QueryEscape(cb))
			require.Equal(t, 200, status, "%v", body)
			assert.Equal(t, cb, body["callback_url"], "stored as sent")
			txid, err := s.Pay("btc", body["address_in"].(string), dec("0.001"))
			require.NoError(t, err)
			require.NoError(t, s.Confirm(txid, 1))
		}
		require.NoError(t, s.Flush(ctx))
	}
	got := shop.received()
	require.Len(t, got, 4, "one confirmed callback per payment, by GET and by POST")
	for _, r := range got {
		signed := []byte(r.URL) // http:// + Host + RequestURI, as a verifier rebuilds it
		if r.Method == "POST" {
			signed = r.Body
		}
		verify(t, &key.PublicKey, signed, r.Header.Get(callback.SignatureHeader))
		for _, b := range []byte(r.URL) {
			require.Less(t, b, byte(0x80), "the URL on the wire is ASCII: %q", r.URL)
		}
	}
}
