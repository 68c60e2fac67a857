package callback

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/slowbody"
)

// statusRecorder wraps a ResponseWriter to keep the status written, and
// unwraps to it so that http.ResponseController reaches the connection.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// TestSlowBodyIsCutOffAtTheReadTimeout sends a signed callback to a real
// server one byte at a time, slowly enough that the whole body would take
// far longer than the handler's read timeout. The handler stops reading at
// the timeout, answers 408 without "*ok*" and returns while the client is
// still sending; fn never runs.
func TestSlowBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) { testSlowBody(t, proto) })
	}
}

func testSlowBody(t *testing.T, proto string) {
	a, _ := testKeys(t)
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn, WithReadTimeout(100*time.Millisecond))
	type result struct {
		status  int
		sentAll bool
	}
	var body *slowbody.Body // set before the request is sent
	results := make(chan result, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, proto, r.Proto)
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		results <- result{rec.status, body.Sent() == r.ContentLength}
	}))
	if proto == "HTTP/2.0" {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	defer srv.Close()

	form := fixture(t, "post_form_confirmed.body")
	body = slowbody.New([]byte(form), 10*time.Millisecond) // about 6 s for the whole body
	defer body.Stop()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/callback", body.Reader)
	require.NoError(t, err)
	req.ContentLength = int64(len(form))
	req.Header.Set("Content-Type", formType)
	req.Header.Set(SignatureHeader, sign(t, a, []byte(form)))
	resp, err := srv.Client().Do(req)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
		assert.NotContains(t, string(body), OK)
	}
	got := <-results
	body.Stop()
	assert.Equal(t, http.StatusRequestTimeout, got.status)
	assert.False(t, got.sentAll, "the handler returned before the body was complete")
	assert.Empty(t, s.payments())
}

// TestBodyReadTimeoutWithoutADeadline: where the ResponseWriter cannot set
// a read deadline (a recorder, a wrapper without Unwrap), the handler
// still stops waiting at the timeout and answers 408.
func TestBodyReadTimeoutWithoutADeadline(t *testing.T) {
	a, _ := testKeys(t)
	var s sink
	h := newTestHandler(t, newTestVerifier(t), s.fn, WithReadTimeout(50*time.Millisecond))
	form := fixture(t, "post_form_confirmed.body")
	pr, pw := io.Pipe()
	defer pw.Close() // ends the abandoned read
	go func() { _, _ = pw.Write([]byte(form[:10])) }()
	r := httptest.NewRequest(http.MethodPost, "/callback", pr)
	r.ContentLength = int64(len(form))
	r.Header.Set("Content-Type", formType)
	r.Header.Set(SignatureHeader, sign(t, a, []byte(form)))
	w := serve(h, r)
	assertNotOK(t, w, http.StatusRequestTimeout)
	assert.Equal(t, "close", w.Header().Get("Connection"))
	assert.Empty(t, s.payments())

	// A body that arrives in time is read as usual, through the same
	// reading goroutine. Its timeout is far longer than the read of a body
	// already in memory, so a loaded machine that runs the goroutine late
	// does not turn the answer into 408.
	patient := newTestHandler(t, newTestVerifier(t), s.fn, WithReadTimeout(time.Minute))
	assertOK(t, serve(patient, signedPOST(t, a, "/callback", formType, form)))
	assert.Len(t, s.payments(), 1)
}
