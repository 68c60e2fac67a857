package cryptapi

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
)

// readBody reads at most maxBody bytes and always drains and closes.
func (c *Client) readBody(resp *http.Response) ([]byte, error) {
	defer drainClose(resp.Body)
	limit := c.maxBody
	if limit < math.MaxInt64 {
		limit++ // one byte more shows an answer longer than maxBody
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.maxBody {
		return nil, &APIError{
			StatusCode: resp.StatusCode,
			Message:    ErrResponseTooLarge.Error(),
			Body:       c.excerpt(data),
		}
	}
	return data, nil
}

// drainClose reads a bounded remainder so the connection can be reused,
// then closes.
func drainClose(b io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(b, 64<<10))
	_ = b.Close()
}

// statusEnvelope is what every answer may carry.
type statusEnvelope struct {
	Status  any `json:"status"`
	Error   any `json:"error"`
	Message any `json:"message"`
	Detail  any `json:"detail"`
}

// statusReporter is implemented by answers that carry the service's
// status field, so that decode can see {"status":"error"} in the typed
// result instead of decoding the body a second time.
type statusReporter interface{ apiStatus() string }

// decode maps an answer to out or to an error. A success answer is decoded
// once; only failures pay for the envelope pass that extracts the message.
func (c *Client) decode(op string, status int, data []byte, out any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		msg := "response is not JSON"
		if len(trimmed) == 0 {
			msg = "empty response"
		}
		return &APIError{StatusCode: status, Message: msg, Body: c.excerpt(data)}
	}
	if status < 200 || status > 299 || out == nil {
		return c.envelopeError(status, trimmed)
	}
	var err error
	if u, ok := out.(json.Unmarshaler); ok {
		// Every answer type's UnmarshalJSON starts with a json.Unmarshal of
		// the whole body, which validates it; calling it directly saves
		// json.Unmarshal's own validation and skip passes over the body.
		err = u.UnmarshalJSON(trimmed)
	} else {
		err = json.Unmarshal(trimmed, out)
	}
	if err != nil {
		if e := c.envelopeError(status, trimmed); e != nil {
			return e
		}
		return &DecodeError{Op: op, StatusCode: status, Body: c.excerpt(data), Err: err}
	}
	if sr, ok := out.(statusReporter); ok && strings.EqualFold(sr.apiStatus(), "error") {
		return c.envelopeError(status, trimmed)
	}
	return nil
}

// envelopeError returns the *APIError a body describes: any non-2xx
// status, or {"status":"error"} whatever the status. It returns nil for a
// 2xx body that does not say error.
func (c *Client) envelopeError(status int, body []byte) error {
	var env statusEnvelope
	valid := body[0] != '{' || json.Unmarshal(body, &env) == nil
	st, _ := env.Status.(string)
	isErr := strings.EqualFold(st, "error")
	if !isErr && status >= 200 && status <= 299 {
		return nil
	}
	msg := firstText(env.Error, env.Message, env.Detail)
	switch {
	case msg != "":
	case !valid:
		msg = "response is not valid JSON"
	case isErr:
		msg = "the service reported an error without a message"
	default:
		msg = http.StatusText(status)
	}
	return &APIError{StatusCode: status, Message: truncate(c.redactText(msg), 300), Body: c.excerpt(body)}
}

// firstText returns the first non-empty textual value, flattening an error
// object such as {"error":{"message":"..."}} if the service sends one.
func firstText(vs ...any) string {
	for _, v := range vs {
		switch t := v.(type) {
		case string:
			if t != "" {
				return t
			}
		case map[string]any:
			if s := firstText(t["message"], t["error"], t["detail"]); s != "" {
				return s
			}
		case nil:
		default:
			b, _ := json.Marshal(t)
			if len(b) > 0 {
				return string(b)
			}
		}
	}
	return ""
}
