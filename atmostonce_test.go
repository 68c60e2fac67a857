package cryptapi

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moneyOps are the calls that move money or create a payment page.
func moneyOps() []opSpec {
	var out []opSpec
	for _, op := range allOps() {
		if !op.retried {
			out = append(out, op)
		}
	}
	return append(out, payoutMoneyOps()...)
}

// payoutMoneyOps are the payout calls that move money beyond allOps.
func payoutMoneyOps() []opSpec {
	return []opSpec{
		{name: "send payouts", route: "POST /btc/payout/request/bulk/process/", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.SendPayouts(ctx, "btc", map[string]decimal.Decimal{btcOut1: mustDec("0.01")})
			}},
		{name: "payout from requests", route: "POST /payout/create/", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreatePayoutFromRequests(ctx, []string{"52211", "52212"})
			}},
		{name: "process payout", route: "POST /payout/process/", needKey: true,
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.ProcessPayout(ctx, "2461") }},
	}
}

// okForAll is a success answer every money operation accepts.
const okForAll = `{"status":"success","payment_url":"https://pay.example/p/x/","payment_id":"x","success_token":"t",` +
	`"request_ids":["1"],"queued":true,"payout_info":{"id":2461,"status":"Created"}}`

// HTTP/2 frame types, flags and error codes (RFC 9113) the test server
// speaks by hand, so that it can answer in ways net/http's server never
// does.
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2Ping         = 0x6
	h2GoAway       = 0x7
	h2FlagEnd      = 0x1 // END_STREAM, or ACK on SETTINGS and PING
	h2FlagHeaders  = 0x4 // END_HEADERS
	h2ProtocolErr  = 0x1
	h2RefusedErr   = 0x7
	h2ClientMagic  = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	h2Status200    = 0x88 // HPACK static table index 8, ":status: 200"
	failRSTProto   = "RST_STREAM(PROTOCOL_ERROR)"
	failRSTRefused = "RST_STREAM(REFUSED_STREAM)"
	failGoAway     = "GOAWAY(last stream 0)"
)

// onceServer is a real TLS server offering HTTP/2 and HTTP/1.1 by ALPN.
// It counts every request that reaches it, on any connection and in
// either protocol. Request number failAt (from 1) is read to its end and
// then failed: over HTTP/2 with h2fail, over HTTP/1.1 by closing the
// connection without an answer. Every other request gets okForAll.
type onceServer struct {
	srv    *httptest.Server
	failAt int32
	h2fail string

	n     atomic.Int32
	mu    sync.Mutex
	proto []string // protocol of each request, in arrival order
}

func newOnceServer(t *testing.T, failAt int32, h2fail string) *onceServer {
	s := &onceServer{failAt: failAt, h2fail: h2fail}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveH1))
	s.srv.EnableHTTP2 = true
	s.srv.TLS = &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	s.srv.Config.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){
		"h2": func(_ *http.Server, c *tls.Conn, _ http.Handler) { s.serveH2(c) },
	}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *onceServer) count() int { return int(s.n.Load()) }

func (s *onceServer) arrived(proto string) int32 {
	s.mu.Lock()
	s.proto = append(s.proto, proto)
	s.mu.Unlock()
	return s.n.Add(1)
}

func (s *onceServer) serveH1(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if s.arrived(r.Proto) == s.failAt {
		hangUp(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, okForAll)
}

func writeH2Frame(w io.Writer, typ, flags byte, stream uint32, payload []byte) error {
	f := make([]byte, 9, 9+len(payload))
	f[0], f[1], f[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	f[3], f[4] = typ, flags
	binary.BigEndian.PutUint32(f[5:], stream&0x7fffffff)
	_, err := w.Write(append(f, payload...))
	return err
}

// serveH2 speaks just enough HTTP/2 to receive requests and answer each
// one when its last frame (END_STREAM) has arrived.
func (s *onceServer) serveH2(c *tls.Conn) {
	defer c.Close()
	magic := make([]byte, len(h2ClientMagic))
	if _, err := io.ReadFull(c, magic); err != nil || string(magic) != h2ClientMagic {
		return
	}
	if writeH2Frame(c, h2Settings, 0, 0, nil) != nil {
		return
	}
	seen := map[uint32]int32{}
	var hdr [9]byte
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := hdr[3], hdr[4]
		stream := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		payload := make([]byte, n)
		if _, err := io.ReadFull(c, payload); err != nil {
			return
		}
		switch typ {
		case h2Settings:
			if flags&h2FlagEnd == 0 {
				_ = writeH2Frame(c, h2Settings, h2FlagEnd, 0, nil)
			}
			continue
		case h2Ping:
			if flags&h2FlagEnd == 0 {
				_ = writeH2Frame(c, h2Ping, h2FlagEnd, 0, payload)
			}
			continue
		case h2Headers:
			if _, ok := seen[stream]; !ok {
				seen[stream] = s.arrived("HTTP/2.0")
			}
		case h2Data:
		default:
			continue
		}
		if flags&h2FlagEnd == 0 {
			continue // the request goes on in DATA frames
		}
		if seen[stream] != s.failAt {
			_ = writeH2Frame(c, h2Headers, h2FlagHeaders, stream, []byte{h2Status200})
			_ = writeH2Frame(c, h2Data, h2FlagEnd, stream, []byte(okForAll))
			continue
		}
		code := make([]byte, 4)
		switch s.h2fail {
		case failRSTProto:
			binary.BigEndian.PutUint32(code, h2ProtocolErr)
			_ = writeH2Frame(c, h2RSTStream, 0, stream, code)
		case failRSTRefused:
			binary.BigEndian.PutUint32(code, h2RefusedErr)
			_ = writeH2Frame(c, h2RSTStream, 0, stream, code)
		case failGoAway:
			_ = writeH2Frame(c, h2GoAway, 0, 0, make([]byte, 8)) // last stream 0, NO_ERROR
			return
		}
	}
}

// tlsTransport is a pooling transport that trusts s, with HTTP/2 on.
func (s *onceServer) tlsTransport() *http.Transport {
	return s.srv.Client().Transport.(*http.Transport).Clone()
}

// wrappedRT is a RoundTripper that is not an *http.Transport, as
// instrumentation wrappers are: the client cannot clone or reconfigure
// what it wraps.
type wrappedRT struct{ rt http.RoundTripper }

func (w wrappedRT) RoundTrip(r *http.Request) (*http.Response, error) { return w.rt.RoundTrip(r) }

// connectProxy is an HTTP proxy that tunnels CONNECT requests and counts
// them.
type connectProxy struct {
	srv      *httptest.Server
	connects atomic.Int32
}

func newConnectProxy(t *testing.T) *connectProxy {
	p := &connectProxy{}
	var wg sync.WaitGroup
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		p.connects.Add(1)
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		down, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		_, _ = io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n")
		wg.Add(2)
		go func() { defer wg.Done(); _, _ = io.Copy(up, rw); up.Close() }()
		go func() { defer wg.Done(); _, _ = io.Copy(down, up); down.Close() }()
	}))
	t.Cleanup(func() { p.srv.Close(); wg.Wait() })
	return p
}

// forwardProxy is a plain HTTP proxy: it reads absolute-form requests
// and forwards them. Request number failAt is read and then dropped (the
// proxy closes the client's connection); each request is counted.
type forwardProxy struct {
	srv    *httptest.Server
	failAt int32
	n      atomic.Int32
}

func newForwardProxy(t *testing.T, failAt int32) *forwardProxy {
	p := &forwardProxy{failAt: failAt}
	up := &http.Transport{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if p.n.Add(1) == p.failAt {
			hangUp(w, r)
			return
		}
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), strings.NewReader(string(body)))
		out.Header = r.Header.Clone()
		resp, err := up.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(func() { p.srv.Close(); up.CloseIdleConnections() })
	return p
}

// TestMoneyCallsGoOutAtMostOnce sends every money call against servers
// and transports that make net/http send a request again: an HTTP/2
// server that resets the stream or goes away after reading the request
// (net/http retries PROTOCOL_ERROR, REFUSED_STREAM and GOAWAY on a new
// connection, rewinding a POST body), an HTTP/1.1 server that hangs up
// after reading it, the same through a CONNECT proxy and a plain HTTP
// proxy, and through a RoundTripper the client cannot reconfigure whose
// pooled connection is reused. Every request is counted where it
// arrives: each money call reaches the service exactly once and fails
// with ErrOutcomeUnknown.
func TestMoneyCallsGoOutAtMostOnce(t *testing.T) {
	type env struct {
		c      *Client
		count  func() int
		warmUp bool // a read first, so that a pooled connection is reused
	}
	newClient := func(t *testing.T, base string, rt http.RoundTripper) *Client {
		c, err := New(WithAPIKey(testKey), WithBaseURL(base), WithRetry(5, 0, 0), WithHTTPClient(&http.Client{Transport: rt}))
		require.NoError(t, err)
		return c
	}
	cases := []struct {
		name  string
		setup func(t *testing.T) env
	}{}
	for _, mode := range []string{failRSTProto, failRSTRefused, failGoAway} {
		cases = append(cases, struct {
			name  string
			setup func(t *testing.T) env
		}{
			name: "HTTP2 " + mode,
			setup: func(t *testing.T) env {
				s := newOnceServer(t, 1, mode)
				return env{c: newClient(t, s.srv.URL, s.tlsTransport()), count: s.count}
			},
		}, struct {
			name  string
			setup func(t *testing.T) env
		}{
			name: "HTTP2 through a CONNECT proxy " + mode,
			setup: func(t *testing.T) env {
				s := newOnceServer(t, 1, mode)
				p := newConnectProxy(t)
				tr := s.tlsTransport()
				pu, _ := url.Parse(p.srv.URL)
				tr.Proxy = http.ProxyURL(pu)
				c := newClient(t, s.srv.URL, tr)
				return env{c: c, count: func() int {
					assert.LessOrEqual(t, int(p.connects.Load()), 1, "tunnels opened")
					return s.count()
				}}
			},
		}, struct {
			name  string
			setup func(t *testing.T) env
		}{
			name: "HTTP2 wrapped pooled transport " + mode,
			setup: func(t *testing.T) env {
				s := newOnceServer(t, 2, mode)
				return env{c: newClient(t, s.srv.URL, wrappedRT{s.tlsTransport()}), count: func() int { return s.count() - 1 }, warmUp: true}
			},
		})
	}
	cases = append(cases, []struct {
		name  string
		setup func(t *testing.T) env
	}{
		{
			name: "HTTP1.1 hang-up after the request",
			setup: func(t *testing.T) env {
				s := newOnceServer(t, 1, "")
				tr := s.tlsTransport()
				tr.ForceAttemptHTTP2 = false
				tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
				return env{c: newClient(t, s.srv.URL, tr), count: s.count}
			},
		},
		{
			name: "HTTP1.1 hang-up on a reused connection of a wrapped transport",
			setup: func(t *testing.T) env {
				s := newOnceServer(t, 2, "")
				tr := s.tlsTransport()
				tr.ForceAttemptHTTP2 = false
				tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
				return env{c: newClient(t, s.srv.URL, wrappedRT{tr}), count: func() int { return s.count() - 1 }, warmUp: true}
			},
		},
		{
			name: "plain HTTP proxy hangs up on a reused connection",
			setup: func(t *testing.T) env {
				target := httptest.NewServer(writeBody(http.StatusOK, "application/json", fixture(t, "info_btc.json")))
				t.Cleanup(target.Close)
				p := newForwardProxy(t, 2)
				pu, _ := url.Parse(p.srv.URL)
				tr := &http.Transport{Proxy: http.ProxyURL(pu)}
				t.Cleanup(tr.CloseIdleConnections)
				return env{c: newClient(t, target.URL, wrappedRT{tr}), count: func() int { return int(p.n.Load()) - 1 }, warmUp: true}
			},
		},
	}...)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range moneyOps() {
				t.Run(op.name, func(t *testing.T) {
					e := tc.setup(t)
					ctx := context.Background()
					if e.warmUp {
						_, err := e.c.Info(ctx, "btc", nil)
						require.NoError(t, err, "warm-up read")
					}
					_, err := op.call(ctx, e.c)
					assert.Equal(t, 1, e.count(), "requests that reached the service")
					require.Error(t, err)
					assert.ErrorIs(t, err, ErrOutcomeUnknown, "%v", err)
					assert.NotErrorIs(t, err, context.Canceled, "the caller did not cancel")
					assertNoKey(t, map[string]string{"error": err.Error()})
				})
			}
		})
	}
}

// TestMoneyCallsWorkOverAnHTTP2CapableServer: a server that offers
// HTTP/2 still serves money calls (over HTTP/1.1), and reads keep using
// the caller's transport as configured.
func TestMoneyCallsWorkOverAnHTTP2CapableServer(t *testing.T) {
	s := newOnceServer(t, 0, "")
	c, err := New(WithAPIKey(testKey), WithBaseURL(s.srv.URL), WithHTTPClient(s.srv.Client()))
	require.NoError(t, err)
	ctx := context.Background()
	for _, op := range moneyOps() {
		_, err := op.call(ctx, c)
		require.NoError(t, err, op.name)
	}
	_, err = c.PublicKey(ctx)
	require.Error(t, err) // okForAll is no public key; the point is the protocol
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.proto, len(moneyOps())+1)
	for i, p := range s.proto[:len(moneyOps())] {
		assert.Equal(t, "HTTP/1.1", p, "money call %d", i)
	}
	assert.Equal(t, "HTTP/2.0", s.proto[len(moneyOps())], "a read keeps the caller's HTTP/2")
}
