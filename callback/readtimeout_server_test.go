package callback

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadTimeoutNeverOutlastsTheServersReadTimeout: a server whose
// ReadTimeout is shorter than the handler's read timeout keeps its bound.
// The handler's own read deadline on the connection replaces the one the
// server set, so without care a slow body would be waited for until the
// handler's (here an hour) rather than the server's (5 s) time-out.
// The body stalls after a few bytes; the handler must give up (408, fn
// never runs) long before its own time-out, at the server's.
//
// The server's ReadTimeout also bounds each connection's TLS handshake, so
// it is kept well above what a handshake takes on a loaded machine under
// the race detector (at 100 ms, handshakes timed out and the handler never
// ran).
func TestReadTimeoutNeverOutlastsTheServersReadTimeout(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) { testServerReadTimeoutKept(t, proto) })
	}
}

func testServerReadTimeoutKept(t *testing.T, proto string) {
	a, _ := testKeys(t)
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn, WithReadTimeout(time.Hour))
	statuses := make(chan int, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		statuses <- rec.status
	}))
	srv.Config.ReadTimeout = 5 * time.Second
	if proto == "HTTP/2.0" {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	defer srv.Close()

	form := fixture(t, "post_form_confirmed.body")
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(form[:10])) }() // then nothing more
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/callback", pr)
	require.NoError(t, err)
	req.ContentLength = int64(len(form))
	req.Header.Set("Content-Type", formType)
	req.Header.Set(SignatureHeader, sign(t, a, []byte(form)))
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()

	// The guard is twenty-four times the server's time-out and a thirtieth
	// of the handler's: only the server's bound can end the read before it.
	guard := time.NewTimer(2 * time.Minute)
	defer guard.Stop()
	select {
	case status := <-statuses:
		assert.Equal(t, http.StatusRequestTimeout, status)
	case <-guard.C:
		t.Fatal("the handler was still waiting for the body long after the server's ReadTimeout")
	}
	assert.Empty(t, s.payments())
	pw.CloseWithError(io.ErrClosedPipe)
}
