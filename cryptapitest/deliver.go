package cryptapitest

import (
	"bytes"
	"container/heap"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"github.com/forwardpay/cryptapi-go/callback"
	"io"
	"net/http"
	"time"
)

// maxInFlight bounds the delivery attempts running at once.
const maxInFlight = 32

// job is one callback or IPN to deliver, with its retries.
type job struct {
	seq         uint64
	kind        string // "callback" or "ipn"
	group       string // deliveries of one group go out in order
	pending     bool
	method      string
	url         string
	body        []byte
	contentType string
	signature   string // computed by the first attempt, outside s.mu
	attempts    int
	nextTry     time.Time
	inFlight    bool
	finished    bool
	superseded  bool // no retries any more: a later delivery replaces it
	index       int  // position in s.queue; -1 when not queued
	// record stores the outcome of an attempt; it runs with s.mu held.
	record func(ok bool, status int, answer string, nextTry, at time.Time)
}

// jobQueue is a min-heap of the jobs waiting for an attempt, by next
// attempt time, then by queueing order. A job is in it when it is neither
// finished, in flight, nor waiting for an earlier delivery of its group.
type jobQueue []*job

func (q jobQueue) Len() int { return len(q) }
func (q jobQueue) Less(a, b int) bool {
	if !q[a].nextTry.Equal(q[b].nextTry) {
		return q[a].nextTry.Before(q[b].nextTry)
	}
	return q[a].seq < q[b].seq
}
func (q jobQueue) Swap(a, b int) {
	q[a], q[b] = q[b], q[a]
	q[a].index = a
	q[b].index = b
}
func (q *jobQueue) Push(x any) {
	j := x.(*job)
	j.index = len(*q)
	*q = append(*q, j)
}
func (q *jobQueue) Pop() any {
	old := *q
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	j.index = -1
	return j
}

// sign returns the base64 RSA PKCS #1 v1.5 SHA-256 signature of data.
func (s *Server) sign(data []byte) string {
	h := sha256.Sum256(data)
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, h[:])
	if err != nil {
		panic("cryptapitest: signing: " + err.Error())
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// Sign returns the x-ca-signature the server would send for data (the full
// URL of a GET delivery, or the body of a POST one). Merchants' tests can
// use it to forge well-signed requests without the server delivering them.
func (s *Server) Sign(data []byte) string { return s.sign(data) }

// newJob builds a delivery of fields to target: GET with the fields in the
// query, or POST with them in a form or JSON body. The target's own query
// parameters stay in the query string in every case. The first attempt
// signs it, so that signing never holds the server's lock.
func (s *Server) newJob(target string, fields []field, post, asJSON bool) *job {
	// Sign the URL as it goes out: escaped (see escapeURLText).
	target = escapeURLText(target)
	j := &job{method: http.MethodGet, index: -1}
	if !post {
		j.url = withQuery(target, encodeQuery(fields))
		return j
	}
	j.method = http.MethodPost
	j.url = withQuery(target, "")
	if asJSON {
		j.body = encodeJSON(fields)
		j.contentType = "application/json"
	} else {
		j.body = []byte(encodeQuery(fields))
		j.contentType = "application/x-www-form-urlencoded"
	}
	return j
}

// signed returns the signature of j, computing it on the first call. Only
// the goroutine that holds j in flight calls it.
func (s *Server) signed(j *job) string {
	if j.signature == "" {
		if j.method == http.MethodGet {
			j.signature = s.sign([]byte(j.url))
		} else {
			j.signature = s.sign(j.body)
		}
	}
	return j.signature
}

// enqueueCallbackLocked queues the pending or confirmed callback of p.
func (s *Server) enqueueCallbackLocked(p *payment, pending bool, now time.Time) {
	st := p.setup
	j := s.newJob(st.callback, p.callbackFields(pending), st.post, st.json)
	j.kind = "callback"
	j.group = "payment:" + p.uuid
	j.pending = pending
	if !pending {
		// The payment moved on: a pending callback still to be delivered
		// goes out once more at most, then stops.
		for _, o := range s.groups[j.group] {
			if o.pending {
				o.superseded = true
				if o.attempts > 0 && !o.inFlight {
					o.finished = true
					if o.index >= 0 {
						heap.Remove(&s.queue, o.index)
					}
					s.forgetLocked(o)
				}
			}
		}
	}
	j.record = func(ok bool, status int, answer string, nextTry, at time.Time) {
		p.logs = append(p.logs, logEntry{
			requestURL: j.url, response: answer, status: status, nextTry: nextTry, pending: pending,
		})
		p.lastUpdate = at
		if ok && !pending {
			p.result = "done"
		}
	}
	s.addJobLocked(j, now)
}

// addJobLocked queues j, due now, and wakes the engine.
func (s *Server) addJobLocked(j *job, now time.Time) {
	s.jobSeq++
	j.seq = s.jobSeq
	j.nextTry = now
	j.index = -1
	if s.groups == nil {
		s.groups = map[string][]*job{}
	}
	s.groups[j.group] = append(s.groups[j.group], j)
	heap.Push(&s.queue, j)
	s.kick()
}

// forgetLocked removes the finished job j, not in flight, from its group.
func (s *Server) forgetLocked(j *job) {
	g := s.groups[j.group]
	for i, o := range g {
		if o == j {
			copy(g[i:], g[i+1:])
			g[len(g)-1] = nil
			g = g[:len(g)-1]
			break
		}
	}
	if len(g) == 0 {
		delete(s.groups, j.group)
	} else {
		s.groups[j.group] = g
	}
}

// kick wakes the delivery engine without blocking.
func (s *Server) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// blockedLocked reports whether an earlier delivery of j's group is in
// flight (its hook call included) or not yet attempted. Groups hold the
// few deliveries of one payment or hosted page, so this is short.
func (s *Server) blockedLocked(j *job) bool {
	for _, o := range s.groups[j.group] {
		if o.seq >= j.seq {
			break
		}
		if o.inFlight || (!o.finished && o.attempts == 0) {
			return true
		}
	}
	return false
}

// busyLocked reports whether a delivery is in flight or due now.
func (s *Server) busyLocked(now time.Time) bool {
	return s.inFlight > 0 || (len(s.queue) > 0 && !s.queue[0].nextTry.After(now))
}

// run is the delivery engine: it starts every due delivery and sleeps
// until the next one is due, a new one is queued, the clock is advanced
// or the server closes. Each start costs O(log n) in the queued
// deliveries n.
func (s *Server) run() {
	defer s.wg.Done()
	_, isReal := s.clock.(realClock)
	_, fake := s.clock.(*FakeClock)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		now := s.clock.Now()
		parked := false
		for s.inFlight < maxInFlight && len(s.queue) > 0 && !s.queue[0].nextTry.After(now) {
			j := heap.Pop(&s.queue).(*job)
			if s.blockedLocked(j) {
				// Queued again when the delivery it waits for ends.
				parked = true
				continue
			}
			s.inFlight++
			j.inFlight = true
			s.wg.Add(1)
			go s.attempt(j)
		}
		var next time.Time
		if len(s.queue) > 0 && s.queue[0].nextTry.After(now) {
			next = s.queue[0].nextTry
		}
		if parked {
			s.signalLocked()
		}
		s.mu.Unlock()

		var tc <-chan time.Time
		if !next.IsZero() && !fake {
			wait := next.Sub(now)
			if !isReal && wait > time.Second {
				wait = time.Second // an unknown clock is polled
			}
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tc = timer.C
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-tc:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// attempt makes one delivery attempt of j and records its outcome.
func (s *Server) attempt(j *job) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	at := s.clock.Now()
	d := Delivery{Kind: j.kind, Pending: j.pending, Method: j.method, URL: j.url, Body: j.body, At: at}

	var body io.Reader
	if j.body != nil {
		body = bytes.NewReader(j.body)
	}
	req, err := http.NewRequestWithContext(ctx, j.method, j.url, body)
	if err == nil {
		req.Header.Set(callback.SignatureHeader, s.signed(j))
		req.Header.Set("User-Agent", "cryptapitest")
		if j.contentType != "" {
			req.Header.Set("Content-Type", j.contentType)
		}
		d.Header = req.Header.Clone()
		var resp *http.Response
		resp, err = s.hc.Do(req)
		if err == nil {
			data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
			_ = resp.Body.Close()
			d.StatusCode = resp.StatusCode
			d.Response = string(data)
			if rerr != nil {
				d.Err = rerr.Error()
			}
		}
	}
	if err != nil {
		d.Err = err.Error()
	}
	d.OK = d.Err == "" && d.StatusCode == http.StatusOK && string(bytes.TrimSpace([]byte(d.Response))) == "*ok*"

	s.mu.Lock()
	if s.closed {
		// Abandoned by Close: not an attempt the merchant saw through.
		j.finished = true
		s.doneLocked(j)
		s.mu.Unlock()
		return
	}
	j.attempts++
	s.deliveries = append(s.deliveries, d)
	s.deliveries = trimFront(s.deliveries, s.history)
	var next time.Time
	switch {
	case d.OK, j.superseded, j.attempts > len(s.schedule):
		j.finished = true
	default:
		next = s.clock.Now().Add(s.schedule[j.attempts-1])
		j.nextTry = next
	}
	answer := d.Response
	if d.Err != "" && answer == "" {
		answer = d.Err
	}
	if j.record != nil {
		j.record(d.OK, d.StatusCode, answer, next, at)
	}
	if s.hook == nil {
		s.doneLocked(j)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	// The attempt stays in flight while the hook runs: Flush waits for
	// it, and the next delivery of the group waits for it, so that the
	// hook sees the deliveries of one payment in order.
	d.Header = d.Header.Clone()
	d.Body = append([]byte(nil), d.Body...)
	s.hook(d)
	s.mu.Lock()
	s.doneLocked(j)
	s.mu.Unlock()
}

// doneLocked ends the attempt of j in flight: j is queued again for its
// retry or forgotten, the deliveries of its group that waited for it are
// queued, and the engine and the waiters of Flush wake.
func (s *Server) doneLocked(j *job) {
	j.inFlight = false
	s.inFlight--
	if j.finished {
		s.forgetLocked(j)
	} else {
		heap.Push(&s.queue, j)
	}
	for _, o := range s.groups[j.group] {
		if o.inFlight || o.finished || o.index >= 0 || o == j {
			continue
		}
		if !s.blockedLocked(o) {
			heap.Push(&s.queue, o)
		}
	}
	s.signalLocked()
	s.kick()
}

// Flush waits until every delivery that is due at the server's current
// time has been attempted (queued callbacks and IPNs, and retries whose
// time has come: with a FakeClock, advance it first) and, with
// WithDeliveryHook, reported to the hook. Deliveries answered with
// anything but "*ok*" are rescheduled, not waited for. Flush returns
// ctx's error if ctx ends first, and ErrClosed after Close.
//
// Do not call Flush from a merchant handler the server is delivering to,
// or from the delivery hook: it would wait for itself.
func (s *Server) Flush(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		busy := s.busyLocked(s.clock.Now())
		ch := s.changed
		s.mu.Unlock()
		if !busy {
			return nil
		}
		s.kick()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
