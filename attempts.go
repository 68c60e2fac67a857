package cryptapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

// AttemptsError wraps the failure of a call that was sent: it says how
// many times the request went out, retries included. Match the failure
// itself through it with errors.As or errors.Is (an *APIError, a
// transport error, ctx.Err()).
type AttemptsError struct {
	// Attempts is how many times the request was sent, at least 1.
	Attempts int
	// Err is the failure of the call.
	Err error
}

// Error returns the failure's text, followed by the number of attempts
// when there was more than one.
func (e *AttemptsError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("%v (after %d attempts)", e.Err, e.Attempts)
	}
	return e.Err.Error()
}

// Unwrap returns the failure of the call.
func (e *AttemptsError) Unwrap() error { return e.Err }

// do runs send and counts the attempts it makes; a failure of a call
// that was sent at least once is wrapped in an *AttemptsError.
func (c *Client) do(ctx context.Context, r *request, out any) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidOption)
	}
	st := &callState{retry: r.retry}
	err := c.send(context.WithValue(ctx, callKey, st), r, out)
	if err != nil && st.attempts > 0 {
		return &AttemptsError{Attempts: st.attempts, Err: err}
	}
	return err
}

// call runs do and returns the answer decoded into a new T.
func call[T any](ctx context.Context, c *Client, r *request) (*T, error) {
	out := new(T)
	if err := c.do(ctx, r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// onAttempt is called by retryablehttp before each attempt: it records
// the attempt's number and logs it when a logger is set.
func (c *Client) onAttempt(l retryablehttp.Logger, r *http.Request, attempt int) {
	if st := stateOf(r.Context()); st != nil {
		st.attempts = attempt + 1
	}
	if c.logger != nil {
		c.logRequest(l, r, attempt)
	}
}
