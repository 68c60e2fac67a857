package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiveRefusesToStartWithoutItsSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"-live"}, errLiveNeedsDestination},
		{[]string{"-live", "-public-url", "https://shop.example"}, errLiveNeedsDestination},
		{[]string{"-live", "-address", "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"}, errLiveNeedsPublicURL},
		{[]string{"-live", "-address", "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", "-public-url", "javascript:x"}, errLiveNeedsPublicURL},
		{[]string{"-addr", "0.0.0.0:8080"}, errNotLoopback},
		{[]string{"-addr", ":8080"}, errNotLoopback},
		{[]string{"-addr", "192.168.1.2:8080"}, errNotLoopback},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, &out, io.Discard)
		assert.ErrorIs(t, err, tc.want, "%q", tc.args)
		assert.Empty(t, out.String(), "nothing started for %q", tc.args)
	}
	for _, ok := range [][]string{{}, {"-addr", "[::1]:0"}, {"-addr", "localhost:0"},
		{"-live", "-address", "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", "-public-url", "https://shop.example"}} {
		_, err := parseConfig(ok, io.Discard)
		assert.NoError(t, err, "%q", ok)
	}
}

// The command starts on the fake, prints the URL to open, and that URL
// sells: a checkout leads to the payment page.
func TestRunPrintsAURLThatSells(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard); _ = pw.Close() }()
	line := make([]byte, 200)
	n, err := pr.Read(line)
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	base := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(line[:n])), "shop: open "), "/")
	u, err := url.Parse(base)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname(), "loopback only")

	resp, err := noFollow.PostForm(base+"/checkout", url.Values{"product": {"tee"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	page, err := http.Get(base + resp.Header.Get("Location"))
	require.NoError(t, err)
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	assert.Equal(t, http.StatusOK, page.StatusCode)
	assert.Contains(t, string(body), `data-status="new"`)
	cancel()
	require.NoError(t, <-done)
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
