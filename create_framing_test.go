package cryptapi

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawCreateServer answers every request on its own connection with the
// bytes frame makes of a create answer bound to the request's callback and
// address, then closes the connection. It returns the base URL.
func rawCreateServer(t *testing.T, frame func(body []byte) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				q := req.URL.Query()
				body := fmt.Sprintf(`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":%q,"callback_url":%q,"priority":"default","status":"success"}`,
					q.Get("address"), q.Get("callback"))
				_, _ = conn.Write(frame([]byte(body)))
			}()
		}
	}()
	return "http://" + ln.Addr().String() + apiPrefix
}

// createAnswerLen is the length of the answer rawCreateServer builds for
// the request of TestCreateResponseLimitHoldsForEveryFraming.
func createAnswerLen() int {
	return len(fmt.Sprintf(`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":%q,"callback_url":%q,"priority":"default","status":"success"}`,
		btcOut1, benchCallback))
}

func head(extra string) []byte {
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n" + extra + "\r\n")
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func chunked(b []byte, size int) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		n := min(size, len(b))
		fmt.Fprintf(&out, "%x\r\n%s\r\n", n, b[:n])
		b = b[n:]
	}
	out.WriteString("0\r\n\r\n")
	return out.Bytes()
}

// TestCreateResponseLimitHoldsForEveryFraming: the create answer is read
// through WithMaxResponseBytes however its length is told, through a real
// connection: an answer exactly at the limit is read and one byte over is
// ErrResponseTooLarge, with a true Content-Length, chunked, delimited by
// the end of the connection, and gzip-compressed (the limit counts the
// bytes after decompression). A Content-Length larger than the body is a
// failure, not an answer; one smaller than the body cuts the answer where
// net/http cuts it. No error text holds the API key.
func TestCreateResponseLimitHoldsForEveryFraming(t *testing.T) {
	n := createAnswerLen()
	framings := map[string]func(body []byte) []byte{
		"content-length": func(b []byte) []byte {
			return append(head("Content-Length: "+strconv.Itoa(len(b))+"\r\n"), b...)
		},
		"chunked": func(b []byte) []byte {
			return append(head("Transfer-Encoding: chunked\r\n"), chunked(b, 7)...)
		},
		"until close": func(b []byte) []byte { return append(head(""), b...) },
		"gzip with length": func(b []byte) []byte {
			z := gzipped(b)
			return append(head("Content-Encoding: gzip\r\nContent-Length: "+strconv.Itoa(len(z))+"\r\n"), z...)
		},
		"gzip chunked": func(b []byte) []byte {
			return append(head("Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"), chunked(gzipped(b), 5)...)
		},
		"content-length zero-padded": func(b []byte) []byte {
			return append(head("Content-Length: 000"+strconv.Itoa(len(b))+"\r\n"), b...)
		},
	}
	opts := &CreateOptions{Callback: benchCallback, Address: btcOut1}
	for name, frame := range framings {
		for _, limit := range []int{n, n - 1, 1, n + 1, 512} {
			for _, key := range []bool{false, true} {
				o := []Option{WithBaseURL(rawCreateServer(t, frame)), WithoutRetries(), WithMaxResponseBytes(int64(limit))}
				if key {
					o = append(o, WithAPIKey(testKey))
				}
				c, err := New(o...)
				require.NoError(t, err)
				addr, err := c.CreateAddress(t.Context(), "btc", opts)
				what := fmt.Sprintf("%s, limit %d (answer %d), key %v", name, limit, n, key)
				if limit >= n {
					if assert.NoError(t, err, what) {
						assert.Equal(t, btcOut1, addr.AddressOut, what)
						assert.Equal(t, benchCallback, addr.CallbackURL, what)
					}
					continue
				}
				assert.Nil(t, addr, what)
				assert.ErrorIs(t, err, ErrResponseTooLarge, what)
				if err != nil {
					assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), testKey[:16], what)
				}
			}
		}
	}

	lying := map[string]struct {
		frame func(body []byte) []byte
		ok    bool
	}{
		// A body shorter than its Content-Length, then the end of the
		// connection: unexpected EOF.
		"length larger than body": {frame: func(b []byte) []byte {
			return append(head("Content-Length: "+strconv.Itoa(len(b)+10)+"\r\n"), b...)
		}},
		// A length far larger than the body, below and above the
		// buffer sized from it.
		"length a megabyte larger": {frame: func(b []byte) []byte {
			return append(head("Content-Length: "+strconv.Itoa(len(b)+1<<20)+"\r\n"), b...)
		}},
		"length below the preallocation bound": {frame: func(b []byte) []byte {
			return append(head("Content-Length: "+strconv.Itoa(1<<20-1)+"\r\n"), b...)
		}},
		// The answer, then bytes past its Content-Length: net/http reads
		// the announced length only, which is the whole answer.
		"length smaller than body, answer complete": {ok: true, frame: func(b []byte) []byte {
			return append(head("Content-Length: "+strconv.Itoa(len(b))+"\r\n"), append(b, `garbage that is past the length`...)...)
		}},
		// A Content-Length that cuts the answer: a decoding error.
		"length cuts the answer": {frame: func(b []byte) []byte {
			return append(head("Content-Length: "+strconv.Itoa(len(b)-2)+"\r\n"), b...)
		}},
		"length zero": {frame: func(b []byte) []byte {
			return append(head("Content-Length: 0\r\n"), b...)
		}},
	}
	for name, tc := range lying {
		for _, limit := range []int{n, 1 << 20, 64 << 20} {
			c, err := New(WithBaseURL(rawCreateServer(t, tc.frame)), WithoutRetries(), WithAPIKey(testKey), WithMaxResponseBytes(int64(limit)))
			require.NoError(t, err)
			addr, err := c.CreateAddress(t.Context(), "btc", opts)
			what := fmt.Sprintf("%s, limit %d", name, limit)
			if tc.ok {
				if assert.NoError(t, err, what) {
					assert.Equal(t, btcOut1, addr.AddressOut, what)
				}
				continue
			}
			assert.Nil(t, addr, what)
			require.Error(t, err, what)
			assert.False(t, errors.Is(err, ErrResponseTooLarge), "%s: %v", what, err)
			assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), testKey[:16], what)
			assert.False(t, strings.Contains(err.Error(), "apikey="), what)
		}
	}
}

// TestCreateResponseLimitHoldsOverHTTP2: the limit holds over HTTP/2,
// with a Content-Length and without one.
func TestCreateResponseLimitHoldsOverHTTP2(t *testing.T) {
	n := createAnswerLen()
	for _, withLength := range []bool{true, false} {
		var protos sync.Map
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			protos.Store(r.Proto, true)
			q := r.URL.Query()
			body := fmt.Sprintf(`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":%q,"callback_url":%q,"priority":"default","status":"success"}`,
				q.Get("address"), q.Get("callback"))
			if withLength {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			}
			_, _ = io.WriteString(w, body[:len(body)/2])
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, body[len(body)/2:])
		}))
		srv.EnableHTTP2 = true
		srv.StartTLS()
		t.Cleanup(srv.Close)
		for _, limit := range []int{n, n - 1} {
			c, err := New(WithBaseURL(srv.URL+apiPrefix), WithHTTPClient(srv.Client()), WithAPIKey(testKey), WithoutRetries(), WithMaxResponseBytes(int64(limit)))
			require.NoError(t, err)
			addr, err := c.CreateAddress(t.Context(), "btc", &CreateOptions{Callback: benchCallback, Address: btcOut1})
			what := fmt.Sprintf("length %v, limit %d (answer %d)", withLength, limit, n)
			if limit >= n {
				if assert.NoError(t, err, what) {
					assert.Equal(t, btcOut1, addr.AddressOut, what)
				}
				continue
			}
			assert.Nil(t, addr, what)
			assert.ErrorIs(t, err, ErrResponseTooLarge, what)
		}
		_, h2 := protos.Load("HTTP/2.0")
		assert.True(t, h2, "the answers went over HTTP/2")
	}
}
