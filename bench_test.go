package cryptapi

// Benchmarks of the SDK against a hand-written net/http + encoding/json
// client doing the same useful work, on the same local server:
//
//	go test -run '^$' -bench 'CreateAddress|Coins' -benchmem -count 5 .

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/benchcmp"
)

// benchServer serves the fixtures at their paths, without recording.
func benchServer(b *testing.B) *httptest.Server {
	srv, _ := benchServerCounting(b)
	return srv
}

// benchServerCounting is benchServer with a count of the connections it
// accepted, to show which contenders reuse connections.
func benchServerCounting(b *testing.B) (*httptest.Server, *atomic.Int64) {
	b.Helper()
	create := fixture(b, "create_single.json")
	all := fixture(b, "info_all.json")
	conns := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case apiPrefix + "/btc/create/":
			_, _ = w.Write(create)
		case apiPrefix + "/info/":
			_, _ = w.Write(all)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	b.Cleanup(srv.Close)
	return srv, conns
}

// pooledClient is what the baseline uses: a pooled transport, like the
// SDK's default client.
func pooledClient(b *testing.B) *http.Client {
	t := &http.Transport{MaxIdleConns: 100, MaxIdleConnsPerHost: 32, ForceAttemptHTTP2: true}
	b.Cleanup(t.CloseIdleConnections)
	return &http.Client{Transport: t}
}

// benchClient is an SDK client on the same *http.Client as the baseline,
// so that the comparison is the SDK's own work. BenchmarkCreateAddress-
// DefaultClient measures the default client (proxy from the environment,
// a 30 s timeout per request) instead.
func benchClient(b *testing.B, srv *httptest.Server, opts ...Option) *Client {
	c, err := New(append([]Option{WithBaseURL(srv.URL + apiPrefix), WithHTTPClient(pooledClient(b))}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

const benchCallback = "https://shop.example/cryptapi/callback?order_id=1042&nonce=Yq3v8sPzK2"

func BenchmarkCreateAddress(b *testing.B) {
	srv := benchServer(b)
	c := benchClient(b, srv)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		addr, err := c.CreateAddress(ctx, "btc", &CreateOptions{Callback: benchCallback, Address: btcOut1})
		if err != nil || addr.AddressIn == "" {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateAddressDefaultClient(b *testing.B) {
	srv := benchServer(b)
	c, err := New(WithBaseURL(srv.URL + apiPrefix))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.hc.CloseIdleConnections)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		addr, err := c.CreateAddress(ctx, "btc", &CreateOptions{Callback: benchCallback, Address: btcOut1})
		if err != nil || addr.AddressIn == "" {
			b.Fatal(err)
		}
	}
}

// baselineAddress is the create answer with amounts kept as text.
type baselineAddress struct {
	AddressIn   string      `json:"address_in"`
	AddressOut  string      `json:"address_out"`
	CallbackURL string      `json:"callback_url"`
	Priority    string      `json:"priority"`
	Minimum     json.Number `json:"minimum_transaction_coin"`
	Status      string      `json:"status"`
	Error       string      `json:"error"`
}

func baselineCreate(hc *http.Client, base, ticker, callback, address string) (*baselineAddress, error) {
	q := url.Values{}
	q.Set("callback", callback)
	q.Set("address", address)
	resp, err := hc.Get(base + "/" + ticker + "/create/?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out baselineAddress
	err = json.NewDecoder(io.LimitReader(resp.Body, DefaultMaxResponseBytes)).Decode(&out)
	_, _ = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || out.Status != "success" {
		return nil, fmt.Errorf("create: HTTP %d: %s", resp.StatusCode, out.Error)
	}
	return &out, nil
}

func BenchmarkCreateAddressBaseline(b *testing.B) {
	srv := benchServer(b)
	hc := pooledClient(b)
	base := srv.URL + apiPrefix
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		addr, err := baselineCreate(hc, base, "btc", benchCallback, btcOut1)
		if err != nil || addr.AddressIn == "" {
			b.Fatal(err)
		}
	}
}

// BenchmarkCoins reads the list afresh each time (WithInfoCacheTTL(0)):
// the request and the decoding, not the list the client keeps.
func BenchmarkCoins(b *testing.B) {
	srv := benchServer(b)
	c := benchClient(b, srv, WithInfoCacheTTL(0))
	ctx := context.Background()
	want := allCoinsRecords()
	b.ReportAllocs()
	b.SetBytes(int64(len(fixture(b, "info_all.json"))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		coins, err := c.Coins(ctx, nil)
		if err != nil || len(coins) != want {
			b.Fatal(err, len(coins))
		}
	}
}

// baselineRecord is a coin record with amounts kept as text.
type baselineRecord struct {
	Coin                   string          `json:"coin"`
	Ticker                 string          `json:"ticker"`
	MinimumTransaction     json.Number     `json:"minimum_transaction"`
	MinimumTransactionCoin json.Number     `json:"minimum_transaction_coin"`
	MinimumFee             json.Number     `json:"minimum_fee"`
	MinimumFeeCoin         json.Number     `json:"minimum_fee_coin"`
	FeePercent             json.Number     `json:"fee_percent"`
	NetworkFeeEstimation   json.Number     `json:"network_fee_estimation"`
	Prices                 json.RawMessage `json:"prices"`
	PricesUpdated          *string         `json:"prices_updated"`
	prices                 map[string]json.Number
}

// decodePrices reads the prices map; [] is the service's empty map.
func (r *baselineRecord) decodePrices() error {
	if len(r.Prices) == 0 || r.Prices[0] != '{' {
		r.prices = map[string]json.Number{}
		return nil
	}
	return json.Unmarshal(r.Prices, &r.prices)
}

// baselineCoins fetches the all-coins answer and keys its records by
// ticker in "trc20_usdt" form, telling native records from networks of
// tokens and skipping what is neither.
func baselineCoins(hc *http.Client, base string) (map[string]*baselineRecord, error) {
	resp, err := hc.Get(base + "/info/")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := decodeBaselineCoins(io.LimitReader(resp.Body, DefaultMaxResponseBytes))
	_, _ = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("info: HTTP %d", resp.StatusCode)
	}
	return out, nil
}

func decodeBaselineCoins(r io.Reader) (map[string]*baselineRecord, error) {
	var top map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&top); err != nil {
		return nil, err
	}
	out := make(map[string]*baselineRecord, len(top))
	for key, raw := range top {
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var rec baselineRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, err
		}
		if rec.Coin != "" {
			if err := rec.decodePrices(); err != nil {
				return nil, err
			}
			out[key] = &rec
			continue
		}
		var tokens map[string]*baselineRecord
		if err := json.Unmarshal(raw, &tokens); err != nil {
			return nil, err
		}
		for tok, r := range tokens {
			if r == nil || r.Coin == "" {
				continue
			}
			if err := r.decodePrices(); err != nil {
				return nil, err
			}
			out[key+"_"+tok] = r
		}
	}
	if len(out) == 0 {
		return nil, errors.New("info: no coins")
	}
	return out, nil
}

func BenchmarkCoinsBaseline(b *testing.B) {
	srv := benchServer(b)
	hc := pooledClient(b)
	base := srv.URL + apiPrefix
	want := allCoinsRecords()
	b.ReportAllocs()
	b.SetBytes(int64(len(fixture(b, "info_all.json"))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		coins, err := baselineCoins(hc, base)
		if err != nil || len(coins) != want {
			b.Fatal(err, len(coins))
		}
	}
}

// The decoding alone, without HTTP: where the time of BenchmarkCoins goes
// when it is not the network.

func BenchmarkAllInfoDecode(b *testing.B) {
	body := fixture(b, "info_all.json")
	want := allCoinsRecords()
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		var cs Coins
		if err := c.decode("coins", http.StatusOK, body, &cs); err != nil || len(cs) != want {
			b.Fatal(err, len(cs))
		}
	}
}

func BenchmarkAllInfoDecodeBaseline(b *testing.B) {
	body := fixture(b, "info_all.json")
	want := allCoinsRecords()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		cs, err := decodeBaselineCoins(bytes.NewReader(body))
		if err != nil || len(cs) != want {
			b.Fatal(err, len(cs))
		}
	}
}

// mapAnyCoins is what the public Go clients of the service do with the
// all-coins answer: one decoding pass into map[string]any, amounts left
// as float64 or text.
func mapAnyCoins(hc *http.Client, base string) (map[string]any, error) {
	resp, err := hc.Get(base + "/info/")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	err = json.NewDecoder(io.LimitReader(resp.Body, DefaultMaxResponseBytes)).Decode(&out)
	_, _ = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("info: HTTP %d", resp.StatusCode)
	}
	return out, nil
}

// BenchmarkCoinsVsMapAny compares Coins (exact decimals, typed records)
// with the one-pass map[string]any decoding of the public clients, over
// HTTP to the same local server, in alternating chunks: "sdk" is Coins
// as a merchant gets it, the list kept for the default TTL, so a call
// copies the list kept; "fresh" reads it on every call
// (WithInfoCacheTTL(0)). "sdk/mapany" and "fresh/mapany" are the ratios.
func BenchmarkCoinsVsMapAny(b *testing.B) {
	srv := benchServer(b)
	c := benchClient(b, srv)
	fresh := benchClient(b, srv, WithInfoCacheTTL(0))
	hc := pooledClient(b)
	base := srv.URL + apiPrefix
	ctx := context.Background()
	want := allCoinsRecords()
	benchcmp.Run(b, 20,
		benchcmp.Contender{Name: "mapany", Op: func(n int) {
			for i := 0; i < n; i++ {
				m, err := mapAnyCoins(hc, base)
				if err != nil || len(m) == 0 {
					b.Fatal(err)
				}
			}
		}},
		benchcmp.Contender{Name: "sdk", Op: func(n int) {
			for i := 0; i < n; i++ {
				coins, err := c.Coins(ctx, nil)
				if err != nil || len(coins) != want {
					b.Fatal(err, len(coins))
				}
			}
		}},
		benchcmp.Contender{Name: "fresh", Op: func(n int) {
			for i := 0; i < n; i++ {
				coins, err := fresh.Coins(ctx, nil)
				if err != nil || len(coins) != want {
					b.Fatal(err, len(coins))
				}
			}
		}},
	)
}

// BenchmarkAllInfoDecodeVsMapAny is the decoding alone, without HTTP:
// the SDK's decode of the all-coins answer against json.Unmarshal into
// map[string]any, in alternating chunks.
func BenchmarkAllInfoDecodeVsMapAny(b *testing.B) {
	body := fixture(b, "info_all.json")
	want := allCoinsRecords()
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	benchcmp.Run(b, 20,
		benchcmp.Contender{Name: "mapany", Op: func(n int) {
			for i := 0; i < n; i++ {
				var m map[string]any
				if err := json.Unmarshal(body, &m); err != nil || len(m) == 0 {
					b.Fatal(err)
				}
			}
		}},
		benchcmp.Contender{Name: "sdk", Op: func(n int) {
			for i := 0; i < n; i++ {
				var cs Coins
				if err := c.decode("coins", http.StatusOK, body, &cs); err != nil || len(cs) != want {
					b.Fatal(err, len(cs))
				}
			}
		}},
	)
}

// BenchmarkCreateAddressVsBaseline compares CreateAddress with the
// hand-written net/http + encoding/json call (baselineCreate) over HTTP to
// the same local server, in alternating chunks. Each has a pooled
// *http.Client of its own (the same configuration), so each reuses one
// keep-alive connection: CreateAddress is idempotent by callback URL and
// goes over the client's pooled transport, not the at-most-once path of
// the calls that move money (a new HTTP/1.1 connection per call). The
// "conns" metric is the number of connections the server accepted over
// the whole run, which shows it. "sdk/baseline" is the ratio.
func BenchmarkCreateAddressVsBaseline(b *testing.B) {
	srv, conns := benchServerCounting(b)
	c := benchClient(b, srv)
	hc := pooledClient(b)
	base := srv.URL + apiPrefix
	ctx := context.Background()
	benchcmp.Run(b, 50,
		benchcmp.Contender{Name: "baseline", Op: func(n int) {
			for i := 0; i < n; i++ {
				addr, err := baselineCreate(hc, base, "btc", benchCallback, btcOut1)
				if err != nil || addr.AddressIn == "" {
					b.Fatal(err)
				}
			}
		}},
		benchcmp.Contender{Name: "sdk", Op: func(n int) {
			for i := 0; i < n; i++ {
				addr, err := c.CreateAddress(ctx, "btc", &CreateOptions{Callback: benchCallback, Address: btcOut1})
				if err != nil || addr.AddressIn == "" {
					b.Fatal(err)
				}
			}
		}},
	)
	b.ReportMetric(float64(conns.Load()), "conns")
}
