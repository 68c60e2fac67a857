package cryptapitest_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Addresses valid for their coins, used as merchants' destinations.
const (
	btcDest  = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	btcDest2 = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"
	btcDest3 = "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
	ethDest  = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F"
	trxDest  = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
	ltcDest  = "ltc1qlaevvn2ddl8fn92xvwdgsdrzudt8cztufy8ky8"
	bchDest  = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// received is one request that reached a merchant.
type received struct {
	Method string
	URL    string // full URL as called: scheme, host, path and query
	Query  url.Values
	Header http.Header
	Body   []byte
}

// merchant is a shop's callback endpoint on 127.0.0.1. By default it
// answers "*ok*"; answer overrides that per call (n counts from 0).
type merchant struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) (int, string)
}

func newMerchant(t *testing.T) *merchant {
	t.Helper()
	m := &merchant{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		n := len(m.got)
		m.got = append(m.got, received{
			Method: r.Method, URL: "http://" + r.Host + r.RequestURI, Query: r.URL.Query(),
			Header: r.Header.Clone(), Body: body,
		})
		answer := m.answer
		m.mu.Unlock()
		status, text := http.StatusOK, "*ok*"
		if answer != nil {
			status, text = answer(n)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *merchant) setAnswer(f func(n int) (int, string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answer = f
}

func (m *merchant) received() []received {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]received(nil), m.got...)
}

// newServer starts a fake closed at the end of the test.
func newServer(t *testing.T, opts ...cryptapitest.Option) *cryptapitest.Server {
	t.Helper()
	s := cryptapitest.NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

// newClient is an SDK client for s, without retries, whose connections
// are closed at the end of the test.
func newClient(t *testing.T, s *cryptapitest.Server, opts ...cryptapi.Option) *cryptapi.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	all := append([]cryptapi.Option{
		cryptapi.WithBaseURL(s.URL()),
		cryptapi.WithoutRetries(),
		cryptapi.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}),
	}, opts...)
	c, err := cryptapi.New(all...)
	require.NoError(t, err)
	return c
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// verify checks an x-ca-signature over data with pub.
func verify(t *testing.T, pub *rsa.PublicKey, data []byte, sigB64 string) {
	t.Helper()
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	require.NoError(t, err, "signature is not base64")
	h := sha256.Sum256(data)
	assert.NoError(t, rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig), "signature does not verify")
}

// rawGet calls the fake directly, for requests the SDK refuses to send.
func rawGet(t *testing.T, s *cryptapitest.Server, pathAndQuery string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(s.URL() + pathAndQuery)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	data, _ := io.ReadAll(resp.Body)
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	_ = d.Decode(&body)
	return resp.StatusCode, body
}

// apiError asserts err is a service error with status and returns it.
func apiError(t *testing.T, err error, status int) *cryptapi.APIError {
	t.Helper()
	require.Error(t, err)
	var ae *cryptapi.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, status, ae.StatusCode, "status of %v", err)
	return ae
}
