package cryptapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/wire"
)

// logsEach reads the logs of callbackURL, decoding the answer as it
// arrives, and hands each payment to fn, in order, with the answer's
// fields (head, complete when fn runs; the service lists them before its
// callbacks, and payments listed before them are held until they are
// read). fn must not keep p or head after it returns. An error from fn
// stops the reading and is returned as it is. It returns the answer's
// fields (Callbacks nil) when it read the whole answer.
func (c *Client) logsEach(ctx context.Context, ticker, callbackURL string, fn func(head *Logs, p *LoggedPayment) error) (*Logs, error) {
	t, err := parseTicker(ticker)
	if err != nil {
		return nil, err
	}
	if _, err := CallbackURL(callbackURL, nil); err != nil {
		return nil, err
	}
	// Only a 2xx answer is streamed; do turns any other into an error.
	var head *Logs
	err = c.do(ctx, &request{
		op:    "logs",
		path:  t.Path() + "/logs/",
		query: url.Values{"callback": {callbackURL}},
		retry: true,
		stream: func(status int, body io.Reader) error {
			var err error
			head, err = c.streamLogs(status, body, fn)
			return err
		},
	}, nil)
	if isNothingFound(err) {
		return nil, fmt.Errorf("%w: %w", ErrNoLogs, err)
	}
	if err != nil {
		return nil, err
	}
	return head, nil
}

// streamLogs decodes one logs answer from body, maps an answer that is
// not JSON or says error to *APIError, and its decoding failures to
// *DecodeError, as do does for answers read whole.
func (c *Client) streamLogs(status int, body io.Reader, fn func(*Logs, *LoggedPayment) error) (*Logs, error) {
	capture := &prefixWriter{max: maxExcerpt + 256}
	br := bufio.NewReader(io.TeeReader(body, capture))
	lr := &recordLimiter{r: br, max: c.maxBody}
	// Skip leading white space as decode's TrimSpace does.
	for {
		b, err := br.Peek(1)
		if err != nil || len(b) == 0 {
			return nil, &APIError{StatusCode: status, Message: "empty response", Body: c.excerpt(capture.buf)}
		}
		if !isSpace(b[0]) {
			if b[0] != '{' && b[0] != '[' {
				return nil, &APIError{StatusCode: status, Message: "response is not JSON", Body: c.excerpt(capture.buf)}
			}
			break
		}
		_, _ = br.ReadByte()
	}
	var env statusEnvelope
	head, err := decodeLogsStream(lr, &env, func(h *Logs, p *LoggedPayment) error {
		if strings.EqualFold(h.Status, "error") {
			return c.streamedEnvelopeError(status, &env, capture.buf)
		}
		return fn(h, p)
	})
	if err != nil {
		var ce callerError
		if errors.As(err, &ce) {
			return nil, ce.err
		}
		var ae *APIError
		if errors.As(err, &ae) {
			return nil, err
		}
		if errors.Is(err, errRecordTooLarge) {
			return nil, &APIError{StatusCode: status, Message: ErrResponseTooLarge.Error(), Body: c.excerpt(capture.buf)}
		}
		if head != nil && strings.EqualFold(head.Status, "error") {
			return nil, c.streamedEnvelopeError(status, &env, capture.buf)
		}
		return nil, &DecodeError{Op: "logs", StatusCode: status, Body: c.excerpt(capture.buf), Err: err}
	}
	if strings.EqualFold(head.Status, "error") {
		return nil, c.streamedEnvelopeError(status, &env, capture.buf)
	}
	return head, nil
}

// streamedEnvelopeError is envelopeError for an answer that was streamed:
// the message comes from the error, message and detail fields read.
func (c *Client) streamedEnvelopeError(status int, env *statusEnvelope, prefix []byte) error {
	msg := firstText(env.Error, env.Message, env.Detail)
	if msg == "" {
		msg = "the service reported an error without a message"
	}
	return &APIError{StatusCode: status, Message: truncate(c.redactText(msg), 300), Body: c.excerpt(prefix)}
}

// callerError carries an error returned by the caller's function through
// the decoder unchanged.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

// errRecordTooLarge is reported when one record of a streamed answer
// exceeds the response size limit.
var errRecordTooLarge = errors.New("record exceeds size limit")

// recordLimiter fails a read once more than max bytes were read since the
// last reset: the decoder resets it before each record, so that the limit
// bounds each record (plus the decoder's read-ahead) instead of the whole
// answer.
type recordLimiter struct {
	r   io.Reader
	n   int64
	max int64
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, errRecordTooLarge
	}
	// One byte beyond max may be read, to see that it was passed; rest+1
	// is computed only when it is below len(p), so it cannot overflow
	// for a max of math.MaxInt64.
	if rest := l.max - l.n; int64(len(p))-1 > rest {
		p = p[:rest+1]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

func (l *recordLimiter) reset() {
	if l != nil {
		l.n = 0
	}
}

// prefixWriter keeps the first max bytes written to it, for excerpts.
type prefixWriter struct {
	buf []byte
	max int
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if rest := w.max - len(w.buf); rest > 0 {
		w.buf = append(w.buf, p[:min(rest, len(p))]...)
	}
	return len(p), nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// logsHead is what Logs.UnmarshalJSON reads besides the callbacks.
type logsHead struct {
	AddressIn           wire.String     `json:"address_in"`
	AddressOut          json.RawMessage `json:"address_out"`
	CallbackURL         wire.String     `json:"callback_url"`
	Status              wire.String     `json:"status"`
	NotifyPending       wire.Bool       `json:"notify_pending"`
	NotifyConfirmations wire.Int        `json:"notify_confirmations"`
	Priority            wire.String     `json:"priority"`
}

// logsKeys tells which fields of the head a top-level key sets, by
// encoding/json's own matching of keys (case-insensitive), so that the
// streamed decoding reads the same fields as Logs.UnmarshalJSON.
type logsKeys struct {
	AddressIn     *json.RawMessage `json:"address_in"`
	AddressOut    *json.RawMessage `json:"address_out"`
	CallbackURL   *json.RawMessage `json:"callback_url"`
	Status        *json.RawMessage `json:"status"`
	NotifyPending *json.RawMessage `json:"notify_pending"`
	Callbacks     *json.RawMessage `json:"callbacks"`
}

// decodeLogsStream decodes a logs answer from r one payment at a time
// (Logs.UnmarshalJSON collects them); a second callbacks array is an
// error.
// env receives the error, message and detail fields. A non-nil head is
// returned with an error when the fields were read but a later part
// failed.
func decodeLogsStream(r io.Reader, env *statusEnvelope, fn func(*Logs, *LoggedPayment) error) (*Logs, error) {
	lr, _ := r.(*recordLimiter)
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("logs answer is not a JSON object")
	}
	var w logsHead
	var seen logsKeys
	var held []LoggedPayment
	head := &Logs{}
	build := func() {
		out := addressOutText(w.AddressOut)
		*head = Logs{
			AddressIn:           string(w.AddressIn),
			AddressOut:          out,
			Outputs:             parseOutputsLenient(out),
			CallbackURL:         string(w.CallbackURL),
			Status:              string(w.Status),
			NotifyPending:       bool(w.NotifyPending),
			NotifyConfirmations: int(w.NotifyConfirmations),
			Priority:            string(w.Priority),
		}
	}
	ready := func() bool {
		return seen.AddressIn != nil && seen.AddressOut != nil && seen.CallbackURL != nil &&
			seen.Status != nil && seen.NotifyPending != nil
	}
	give := func(p *LoggedPayment) error {
		if err := fn(head, p); err != nil {
			if _, ok := err.(*APIError); ok {
				return err
			}
			return callerError{err}
		}
		return nil
	}
	flush := func() error {
		build()
		for i := range held {
			if err := give(&held[i]); err != nil {
				return err
			}
			held[i] = LoggedPayment{}
		}
		held = nil
		return nil
	}
	callbacksSeen := false
	for dec.More() {
		lr.reset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("logs answer: object key is not a string")
		}
		quoted, _ := json.Marshal(key)
		var k logsKeys
		if err := json.Unmarshal(append(append([]byte("{"), quoted...), `:[]}`...), &k); err != nil {
			return nil, err
		}
		if k.Callbacks == nil {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			obj := append(append(append(append([]byte("{"), quoted...), ':'), raw...), '}')
			if err := json.Unmarshal(obj, &w); err != nil {
				return nil, err
			}
			_ = json.Unmarshal(obj, env) // only strings and objects matter here
			_ = json.Unmarshal(obj, &seen)
			continue
		}
		if callbacksSeen {
			return nil, errors.New("logs answer lists callbacks twice")
		}
		callbacksSeen = true
		tok, err = dec.Token()
		if err != nil {
			return nil, err
		}
		if tok == nil {
			continue // null: no payments
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return nil, errors.New("logs answer: callbacks is not an array")
		}
		if ready() {
			build()
		}
		for dec.More() {
			lr.reset()
			var p LoggedPayment
			if err := dec.Decode(&p); err != nil {
				return nil, err
			}
			if !ready() {
				held = append(held, p)
				continue
			}
			if len(held) > 0 {
				if err := flush(); err != nil {
					return nil, err
				}
			}
			if err := give(&p); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, err
	}
	build()
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("logs answer: data after the object")
		}
		if errors.Is(err, errRecordTooLarge) {
			return nil, err
		}
		if !errors.Is(err, io.EOF) {
			return head, fmt.Errorf("logs answer: %w", err)
		}
	}
	if err := flush(); err != nil {
		return head, err
	}
	return head, nil
}
