package cryptapi

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// TestCreateRequestTargetIsThePlainEncodingOnTheWire: the request target
// a real server receives for a create call is, byte for byte, what
// go-querystring, url.Values.Encode and url.URL.String give for the same
// request, for random options with characters every escaping rule
// touches, with and without an API key, and under a base URL path that
// needs escaping. Callers run concurrently on one client (under -race).
func TestCreateRequestTargetIsThePlainEncodingOnTheWire(t *testing.T) {
	pool := []string{"a", "Z", "0", " ", "+", "&", "=", "?", "#", "%", "%41", "/", ":", "@", "~", "-", ".", "_", "é", "\u212a", "\x7f", ";", "'", "\"", "<", "[", "]"}
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		s := ""
		for range rnd.IntN(n) {
			s += pool[rnd.IntN(len(pool))]
		}
		return s
	}
	for _, key := range []string{"", testKey, "k+y/=& ü%"} {
		var mu sync.Mutex
		got := map[string]string{} // nonce -> request target
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cb := r.URL.Query().Get("callback")
			mu.Lock()
			got[cb] = r.RequestURI
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"address_in":"x","address_out":%q,"callback_url":%q,"status":"success"}`, r.URL.Query().Get("address"), cb)
		}))
		t.Cleanup(srv.Close)
		opts := []Option{WithBaseURL(srv.URL + "/api%20v1/"), WithRetry(0, 0, 0)}
		if key != "" {
			opts = append(opts, WithAPIKey(key))
		}
		c, err := New(opts...)
		require.NoError(t, err)
		type call struct {
			o    *CreateOptions
			want string
		}
		var calls []call
		for i := range 200 {
			params := url.Values{"n": {fmt.Sprint(i)}, "x" + word(4): {word(6), word(3)}}
			o := &CreateOptions{
				Callback: "https://shop.example/c%20b/" + url.PathEscape(word(5)) + "?a=" + url.QueryEscape(word(5)),
				Params:   params, Address: btcOut1,
				Confirmations: rnd.IntN(3), Email: word(5), Priority: word(4),
				Pending: rnd.IntN(2) == 0, Post: rnd.IntN(2) == 0, JSON: rnd.IntN(2) == 0,
				MultiToken: rnd.IntN(2) == 0, MultiChain: rnd.IntN(2) == 0, Convert: rnd.IntN(2) == 0,
			}
			if i%3 == 0 {
				o.Address = ""
				o.Outputs = []Output{{Address: btcOut1, Share: mustDec("0.25")}, {Address: btcAddress(i), Share: mustDec("0.75")}}
			}
			cb, dest, err := c.createParams(ticker.Ticker{Coin: "btc"}, o)
			if err != nil {
				continue // a callback the client refuses, as before
			}
			u, err := c.buildURL(&request{path: "btc/create/", opts: o, query: createValues(cb, dest)})
			require.NoError(t, err)
			calls = append(calls, call{o: o, want: u.RequestURI()})
		}
		require.Greater(t, len(calls), 150)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := g; i < len(calls); i += 4 {
					_, err := c.CreateAddress(t.Context(), "btc", calls[i].o)
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		for _, cl := range calls {
			cb, _, _ := c.createParams(ticker.Ticker{Coin: "btc"}, cl.o)
			assert.Equal(t, cl.want, got[cb])
		}
	}
}
