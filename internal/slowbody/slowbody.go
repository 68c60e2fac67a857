// Package slowbody sends a request body slowly, one byte at a time, as a
// client that wants to hold a server's handler would; for tests of read
// timeouts.
package slowbody

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Body is a request body that arrives one byte per interval.
type Body struct {
	// Reader is the body to send.
	Reader io.Reader

	sent atomic.Int64
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// New starts writing b to the Body's Reader, one byte every interval.
// Call Stop when done with it.
func New(b []byte, every time.Duration) *Body {
	pr, pw := io.Pipe()
	s := &Body{Reader: pr, stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := range b {
			select {
			case <-tick.C:
			case <-s.stop:
				_ = pw.CloseWithError(io.ErrClosedPipe)
				return
			}
			if _, err := pw.Write(b[i : i+1]); err != nil {
				return
			}
			s.sent.Add(1)
		}
		_ = pw.Close()
	}()
	return s
}

// Sent is how many bytes the reader has taken so far.
func (s *Body) Sent() int64 { return s.sent.Load() }

// Stop ends the body (the reader sees an error) and waits for the writer.
func (s *Body) Stop() {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
}
