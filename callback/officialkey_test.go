package callback

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// officialKeyServer is a TLS deployment serving key at /pubkey/ and counting the
// requests.
func officialKeyServer(t *testing.T, key *rsa.PrivateKey) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/pubkey/" || r.URL.Query().Has("apikey") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "success", "pubkey": pemText})
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestWithBlockBeeKeyAcceptsTheOfficialKeyAndCachesIt(t *testing.T) {
	official, other := testKeys(t)
	srv, hits := officialKeyServer(t, official)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v, err := NewVerifier(withOfficialKey(srv.URL, srv.Client()), WithClock(cryptapi.ClockFunc(func() time.Time { return now })))
	require.NoError(t, err)
	body := "uuid=u1&value_coin=0.1"
	for i := 0; i < 5; i++ {
		require.NoError(t, v.Verify(context.Background(), []byte(body), sign(t, official, []byte(body))))
	}
	assert.Equal(t, int32(1), hits.Load(), "fetched once, then cached")
	assert.ErrorIs(t, v.Verify(context.Background(), []byte(body), sign(t, other, []byte(body))), ErrBadSignature,
		"a key the official host does not serve is refused")
	assert.Error(t, v.Verify(context.Background(), []byte(body+"&x=1"), sign(t, official, []byte(body))), "tampered bytes are refused")
}

// TestWithBlockBeeKeyNeverFailsOpen: every way the key can fail to arrive
// from the official host (an untrusted certificate, a redirect to another
// server, the host down, plain http) leaves callbacks refused.
func TestWithBlockBeeKeyNeverFailsOpen(t *testing.T) {
	official, _ := testKeys(t)
	body := []byte("uuid=u1&value_coin=0.1")
	sig := sign(t, official, body)

	t.Run("untrusted certificate", func(t *testing.T) {
		srv, hits := officialKeyServer(t, official)
		v, err := NewVerifier(withOfficialKey(srv.URL, nil)) // the system roots do not trust the test CA
		require.NoError(t, err)
		assert.Error(t, v.Verify(context.Background(), body, sig))
		assert.Zero(t, hits.Load(), "no request got through the handshake")
	})
	t.Run("redirect elsewhere", func(t *testing.T) {
		attacker, hits := officialKeyServer(t, official)
		redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, attacker.URL+"/pubkey/", http.StatusFound)
		}))
		defer redirector.Close()
		v, err := NewVerifier(withOfficialKey(redirector.URL, redirector.Client()))
		require.NoError(t, err)
		assert.Error(t, v.Verify(context.Background(), body, sig))
		assert.Zero(t, hits.Load(), "the redirect was not followed")
	})
	t.Run("host down", func(t *testing.T) {
		srv, _ := officialKeyServer(t, official)
		hc := srv.Client()
		srv.Close()
		v, err := NewVerifier(withOfficialKey(srv.URL, hc))
		require.NoError(t, err)
		err = v.Verify(context.Background(), body, sig)
		assert.Error(t, err)
	})
	t.Run("error answer", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"status":"error","error":"down"}`))
		}))
		defer srv.Close()
		v, err := NewVerifier(withOfficialKey(srv.URL, srv.Client()))
		require.NoError(t, err)
		assert.Error(t, v.Verify(context.Background(), body, sig))
	})
	t.Run("refused configurations", func(t *testing.T) {
		srv, _ := officialKeyServer(t, official)
		other, err := cryptapi.New()
		require.NoError(t, err)
		insecure := srv.Client()
		insecure.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
		for name, opts := range map[string][]VerifierOption{
			"plain http":      {withOfficialKey("http://api.blockbee.io", nil)},
			"no host":         {withOfficialKey("https://", nil)},
			"skip verify":     {withOfficialKey(srv.URL, insecure)},
			"with key source": {WithBlockBeeKey(), WithKeySource(other)},
			"with trust":      {WithBlockBeeKey(), WithTrustFetchedKey()},
		} {
			_, err := NewVerifier(opts...)
			assert.ErrorIs(t, err, cryptapi.ErrInvalidOption, name)
		}
	})
}

func TestWithBlockBeeKeyTargetsTheOfficialHost(t *testing.T) {
	var c verifierConfig
	require.NoError(t, WithBlockBeeKey().applyVerifier(&c))
	cl, ok := c.official.(interface{ BaseURL() string })
	require.True(t, ok)
	assert.Equal(t, "https://api.blockbee.io", cl.BaseURL())
}
