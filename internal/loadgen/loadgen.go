// Package loadgen sends a bounded HTTP load to a server on the loopback
// interface: a fixed number of connections, a bounded number of requests
// and a bounded duration. It is for benchmarks; it refuses any other host.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Limits that no configuration may exceed.
const (
	MaxConns    = 256
	MaxRequests = 1_000_000
	MaxDuration = 5 * time.Minute
)

// Config is one load run.
type Config struct {
	// Conns is the number of connections, each sending one request at a
	// time (at most MaxConns).
	Conns int
	// Requests is the number of requests to send (at most MaxRequests).
	Requests int
	// Duration bounds the run (at most MaxDuration); requests not sent
	// by then are not sent.
	Duration time.Duration
	// Request returns the i-th request's URL and headers. Every URL must
	// be on a loopback address.
	Request func(i int) (target string, header http.Header)
	// Want is the body every answer must have with HTTP 200.
	Want string
}

// Result is what a run did.
type Result struct {
	// Sent is the number of requests answered.
	Sent int
	// Failed is the number of answers that were not HTTP 200 with Want,
	// or transport errors.
	Failed int
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
}

// RPS is the answered requests per second.
func (r Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Elapsed.Seconds()
}

// Client is a pool of keep-alive connections for runs against one
// server. Close it when done.
type Client struct {
	tr *http.Transport
	hc *http.Client
}

// NewClient returns a client holding up to conns connections.
func NewClient(conns int) *Client {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		Proxy:               nil,
	}
	return &Client{tr: tr, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// Close closes the idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// ErrNotLoopback is returned for a target that is not on a loopback
// address.
var ErrNotLoopback = errors.New("loadgen: target is not on a loopback address")

func checkLoopback(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("loadgen: scheme %q", u.Scheme)
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return ErrNotLoopback
	}
	return nil
}

// Run sends cfg.Requests requests over cfg.Conns connections and waits
// for their answers.
func (c *Client) Run(ctx context.Context, cfg Config) (Result, error) {
	switch {
	case cfg.Conns < 1 || cfg.Conns > MaxConns:
		return Result{}, fmt.Errorf("loadgen: %d connections, want 1 to %d", cfg.Conns, MaxConns)
	case cfg.Requests < 0 || cfg.Requests > MaxRequests:
		return Result{}, fmt.Errorf("loadgen: %d requests, want 0 to %d", cfg.Requests, MaxRequests)
	case cfg.Duration <= 0 || cfg.Duration > MaxDuration:
		return Result{}, fmt.Errorf("loadgen: duration %v, want up to %v", cfg.Duration, MaxDuration)
	case cfg.Request == nil:
		return Result{}, errors.New("loadgen: no request function")
	}
	if cfg.Requests > 0 {
		target, _ := cfg.Request(0)
		if err := checkLoopback(target); err != nil {
			return Result{}, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var next, sent, failed atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < cfg.Conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, len(cfg.Want)+1)
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= cfg.Requests {
					return
				}
				target, header := cfg.Request(i)
				if err := checkLoopback(target); err != nil {
					once.Do(func() { firstErr = err })
					cancel()
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
				if err != nil {
					once.Do(func() { firstErr = err })
					cancel()
					return
				}
				for k, vs := range header {
					req.Header[k] = vs
				}
				resp, err := c.hc.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					continue
				}
				n, _ := io.ReadFull(resp.Body, buf)
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(buf[:n]) != cfg.Want {
					failed.Add(1)
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	return Result{Sent: int(sent.Load()), Failed: int(failed.Load()), Elapsed: time.Since(start)}, firstErr
}
