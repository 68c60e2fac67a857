package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunSendsTheRequestsAndChecksAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-N") == "7" {
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = io.WriteString(w, "*ok*")
	}))
	t.Cleanup(srv.Close)
	c := NewClient(4)
	t.Cleanup(c.Close)
	res, err := c.Run(context.Background(), Config{
		Conns: 4, Requests: 50, Duration: time.Minute, Want: "*ok*",
		Request: func(i int) (string, http.Header) {
			h := http.Header{}
			if i == 7 {
				h.Set("X-N", "7")
			}
			return srv.URL + "/cb", h
		},
	})
	require.NoError(t, err)
	assert.Equal(t, 50, res.Sent)
	assert.Equal(t, 1, res.Failed)
}

func TestRunRefusesWhatIsNotBounded(t *testing.T) {
	c := NewClient(1)
	t.Cleanup(c.Close)
	req := func(int) (string, http.Header) { return "http://127.0.0.1:1/", nil }
	for _, cfg := range []Config{
		{Conns: 0, Requests: 1, Duration: time.Second, Request: req},
		{Conns: MaxConns + 1, Requests: 1, Duration: time.Second, Request: req},
		{Conns: 1, Requests: MaxRequests + 1, Duration: time.Second, Request: req},
		{Conns: 1, Requests: 1, Duration: 0, Request: req},
		{Conns: 1, Requests: 1, Duration: MaxDuration + 1, Request: req},
		{Conns: 1, Requests: 1, Duration: time.Second},
	} {
		_, err := c.Run(context.Background(), cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	for _, target := range []string{"http://example.com/", "http://10.0.0.1/", "http://localhost.example/", "ftp://127.0.0.1/"} {
		_, err := c.Run(context.Background(), Config{Conns: 1, Requests: 1, Duration: time.Second,
			Request: func(int) (string, http.Header) { return target, nil }})
		assert.Error(t, err, target)
	}
}
