//lint:file-ignore SA1019 a caller's transport may still set the deprecated Dial and DialTLS; they are guarded too.

package cryptapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
)

// How a request leaves the process: the at-most-once path of calls that
// move money, and the redirect policy of every client.
//
// net/http sends a request again on its own in several cases: a GET on a
// reused keep-alive connection that the server closed after reading it,
// and, over HTTP/2, any request the server refuses with REFUSED_STREAM,
// resets with PROTOCOL_ERROR or drops with GOAWAY, on a new connection and
// with a POST body rewound through GetBody. Each of these needs a second
// connection for the same request, or a second use of one. So a money
// request carries a sendGuard in its context, and:
//
//   - with an *http.Transport (the default, or the caller's through
//     WithHTTPClient), it goes out on a clone that speaks HTTP/1.1 only,
//     never reuses a connection, and whose dialer opens at most one
//     connection per request: a second dial fails before anything is
//     written;
//   - with any RoundTripper, an httptrace GotConn hook counts the
//     connections the request is given and closes any second one before
//     the request is written to it.
//
// A RoundTripper that does not report connections through httptrace (a
// mock, a custom protocol) is used as it is; it must not send a request
// twice itself.

// sendGuard follows one at-most-once request through the transport.
type sendGuard struct {
	dials  atomic.Int32 // connections dialled for the request
	conns  atomic.Int32 // connections the request was given
	cancel context.CancelCauseFunc
}

const guardKey ctxKey = 2

// errSecondConnection is the dial error of a second connection for one
// at-most-once request.
var errSecondConnection = errors.New("cryptapi: refused a second connection for a call that must go out at most once")

// withSendGuard returns ctx carrying a new guard and the trace hook that
// counts connections. The caller must call the guard's cancel(nil) when
// the call is over.
func withSendGuard(ctx context.Context) (context.Context, *sendGuard) {
	g := &sendGuard{}
	ctx, g.cancel = context.WithCancelCause(ctx)
	ctx = context.WithValue(ctx, guardKey, g)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: g.gotConn}), g
}

// gotConn closes every connection after the first one the request is
// given (net/http calls it before it writes the request), and ends the
// request's context so that the transport stops trying at once.
func (g *sendGuard) gotConn(info httptrace.GotConnInfo) {
	if g.conns.Add(1) > 1 {
		if info.Conn != nil {
			_ = info.Conn.Close()
		}
		g.cancel(errSecondConnection)
	}
}

// connected reports whether the request was given a connection, so that
// it may have been (partly) written.
func (g *sendGuard) connected() bool { return g.conns.Load() > 0 }

type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// guardDial lets an at-most-once request dial once.
func guardDial(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if g, ok := ctx.Value(guardKey).(*sendGuard); ok && g.dials.Add(1) > 1 {
			return nil, errSecondConnection
		}
		return dial(ctx, network, addr)
	}
}

// atMostOnceClient returns the client for calls that move money, and
// whether its transport reports every connection before writing to it
// (so that a failure before any connection proves nothing was sent).
// hc's *http.Transport is cloned; another RoundTripper is used as it is,
// under the GotConn guard only.
func atMostOnceClient(hc *http.Client) (*http.Client, bool) {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	t, ok := rt.(*http.Transport)
	if !ok {
		return hc, false
	}
	t = t.Clone()
	t.DisableKeepAlives = true
	t.ForceAttemptHTTP2 = false
	p := new(http.Protocols)
	p.SetHTTP1(true)
	t.Protocols = p
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	if t.TLSClientConfig != nil {
		protos := t.TLSClientConfig.NextProtos[:0:0]
		for _, np := range t.TLSClientConfig.NextProtos {
			if np != "h2" {
				protos = append(protos, np)
			}
		}
		t.TLSClientConfig.NextProtos = protos
	}
	dial := t.DialContext
	if dial == nil && t.Dial != nil {
		d := t.Dial
		dial = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext, t.Dial = guardDial(dial), nil
	if t.DialTLSContext == nil && t.DialTLS != nil {
		d := t.DialTLS
		t.DialTLSContext = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	if t.DialTLSContext != nil {
		t.DialTLSContext, t.DialTLS = guardDial(t.DialTLSContext), nil
	}
	return &http.Client{Transport: t, Timeout: hc.Timeout, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar}, true
}

// withRedirectPolicy returns a copy of hc (never hc itself: it is the
// caller's) whose CheckRedirect applies redirectPolicy before hc's own.
func withRedirectPolicy(hc *http.Client) *http.Client {
	cp := *hc
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := redirectPolicy(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &cp
}

// redirectPolicy refuses every redirect of a call that moves money, a
// redirect to another scheme, host or port (the query holds the API key,
// and net/http would send it on in the Referer header), and more than
// MaxRedirects. A redirect it follows goes without a Referer header.
func redirectPolicy(req *http.Request, via []*http.Request) error {
	first := via[0]
	if st := stateOf(first.Context()); st == nil || !st.retry {
		return fmt.Errorf("%w: a call that moves money is not sent again to follow a redirect", ErrRedirect)
	}
	if !sameOrigin(first.URL, req.URL) {
		return fmt.Errorf("%w: to another scheme, host or port (%s://%s)", ErrRedirect, req.URL.Scheme, req.URL.Hostname())
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects", ErrRedirect, MaxRedirects)
	}
	// net/http sets the previous URL, query and key included, as Referer.
	req.Header.Del("Referer")
	return nil
}

// sameOrigin compares scheme, host and port, with default ports filled in.
// Hosts compare in ASCII case only: a host equal to another only under
// Unicode case folding (the Kelvin sign for "k") is another name.
func sameOrigin(a, b *url.URL) bool {
	return callbackurl.EqualFoldASCII(a.Scheme, b.Scheme) && callbackurl.EqualFoldASCII(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
