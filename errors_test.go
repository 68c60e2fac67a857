package cryptapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPIErrorFromAnswers: every failed answer is an *APIError with the
// HTTP status, a message and a bounded excerpt, whatever the status and
// whatever the body.
func TestAPIErrorFromAnswers(t *testing.T) {
	html := fixture(t, "gateway_502.html")
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantMsg     string
		wantBody    string // substring of the excerpt
	}{
		{"error with HTTP 200", 200, "application/json", string(fixture(t, "error_message.json")),
			"Callback URL not found or no payments have been made to it yet.", `"status": "error"`},
		{"error with HTTP 400", 400, "application/json", `{"status":"error","error":"Invalid ticker"}`, "Invalid ticker", "Invalid ticker"},
		{"error with HTTP 500", 500, "application/json", `{"status":"error","error":"Internal error"}`, "Internal error", ""},
		{"error without message, HTTP 200", 200, "application/json", string(fixture(t, "error_nomessage.json")),
			"the service reported an error without a message", `"status": "error"`},
		{"error without message, HTTP 404", 404, "application/json", `{"status":"error"}`,
			"the service reported an error without a message", ""},
		{"upper-case status", 200, "application/json", `{"status":"ERROR","message":"Rate limited"}`, "Rate limited", ""},
		{"detail field", 404, "application/json", `{"detail":"Not found."}`, "Not found.", ""},
		{"nested error object", 401, "application/json", `{"status":"error","error":{"message":"Invalid API key"}}`, "Invalid API key", ""},
		{"numeric error", 400, "application/json", `{"status":"error","error":42}`, "42", ""},
		{"success status on HTTP 500", 500, "application/json", `{"status":"success"}`, "Internal Server Error", ""},
		{"JSON array on HTTP 503", 503, "application/json", `[]`, "Service Unavailable", "[]"},
		{"HTML gateway page", 502, "text/html", string(html), "response is not JSON", "502 Bad Gateway"},
		{"HTML with HTTP 200", 200, "text/html", string(html), "response is not JSON", "nginx"},
		{"empty body, HTTP 200", 200, "", "", "empty response", ""},
		{"empty body, HTTP 503", 503, "", "", "empty response", ""},
		{"white space only", 200, "application/json", " \n\t ", "empty response", ""},
		{"plain text", 200, "text/plain", "OK", "response is not JSON", "OK"},
		{"truncated JSON on HTTP 502", 502, "application/json", `{"status":"error","error":`, "response is not valid JSON", `{"status"`},
		{"JSON string", 200, "application/json", `"success"`, "response is not JSON", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t, WithoutRetries())
			api.handle("GET /btc/info/", serveBody(tc.status, tc.contentType, []byte(tc.body)))
			info, err := c.Info(context.Background(), "btc", nil)
			assert.Nil(t, info)
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.status, ae.StatusCode)
			assert.Equal(t, tc.wantMsg, ae.Message)
			assert.Contains(t, string(ae.Body), tc.wantBody)
			assert.LessOrEqual(t, len(ae.Body), maxExcerpt)
			assert.Contains(t, err.Error(), fmt.Sprintf("HTTP %d", tc.status))
			var de *DecodeError
			assert.False(t, errors.As(err, &de), "a failed answer is not a decode error")
		})
	}
}

func TestAPIErrorBoundsLongBodies(t *testing.T) {
	c, api := setup(t, WithoutRetries())
	long := "<html>" + strings.Repeat("<p>gateway trouble</p>", 2000) + "</html>"
	api.handle("GET /btc/info/", serveBody(http.StatusBadGateway, "text/html", []byte(long)))
	_, err := c.Info(context.Background(), "btc", nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Len(t, ae.Body, maxExcerpt)
	assert.Less(t, len(err.Error()), 200, "the error text does not carry the body")

	longMsg := strings.Repeat("e", 5000)
	api.handle("GET /btc/info/", serveJSON(`{"status":"error","error":"`+longMsg+`"}`))
	_, err = c.Info(context.Background(), "btc", nil)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, strings.Repeat("e", 300)+"...", ae.Message)
}

func TestAPIErrorMethods(t *testing.T) {
	e := &APIError{StatusCode: 503, Message: "maintenance", Body: []byte("<html>secret-free</html>")}
	assert.Equal(t, "cryptapi: service error (HTTP 503): maintenance", e.Error())
	assert.NotContains(t, e.Error(), "html", "the body stays out of the message")
	assert.True(t, e.Temporary())
	assert.True(t, (&APIError{StatusCode: 429}).Temporary())
	assert.False(t, (&APIError{StatusCode: 400}).Temporary())
	assert.False(t, (&APIError{StatusCode: 200, Message: "x"}).Temporary())
	assert.Equal(t, "cryptapi: service error (HTTP 404): Not Found", (&APIError{StatusCode: 404}).Error())

	wrapped := fmt.Errorf("placing order: %w", e)
	var got *APIError
	require.ErrorAs(t, wrapped, &got)
	assert.Same(t, e, got)
	assert.NotErrorIs(t, wrapped, ErrResponseTooLarge)
	assert.ErrorIs(t, fmt.Errorf("x: %w", &APIError{Message: ErrResponseTooLarge.Error()}), ErrResponseTooLarge)
}

// TestDecodeError: JSON of the wrong shape on success is a *DecodeError,
// with the operation, the status and the decoder's error.
func TestDecodeError(t *testing.T) {
	cases := []struct {
		name, route, body string
		call              func(context.Context, *Client) (any, error)
	}{
		{"info with an object coin", "GET /btc/info/", `{"coin":{"name":"Bitcoin"},"status":"success"}`,
			func(ctx context.Context, c *Client) (any, error) { return c.Info(ctx, "btc", nil) }},
		{"info with a bad amount", "GET /btc/info/", `{"coin":"Bitcoin","minimum_transaction_coin":"lots"}`,
			func(ctx context.Context, c *Client) (any, error) { return c.Info(ctx, "btc", nil) }},
		{"info as an array", "GET /btc/info/", `[{"coin":"Bitcoin"}]`,
			func(ctx context.Context, c *Client) (any, error) { return c.Info(ctx, "btc", nil) }},
		{"logs with callbacks as text", "GET /btc/logs/", `{"status":"success","callbacks":"none"}`,
			func(ctx context.Context, c *Client) (any, error) {
				return c.Logs(ctx, "btc", "https://shop.example/cb")
			}},
		{"logs with a bad amount", "GET /btc/logs/", `{"status":"success","callbacks":[{"value_coin":"ten"}]}`,
			func(ctx context.Context, c *Client) (any, error) {
				return c.Logs(ctx, "btc", "https://shop.example/cb")
			}},
		{"coins as an array", "GET /info/", `[1,2,3]`,
			func(ctx context.Context, c *Client) (any, error) { return c.Coins(ctx, nil) }},
		{"truncated JSON", "GET /btc/info/", `{"coin":"Bitcoin",`,
			func(ctx context.Context, c *Client) (any, error) { return c.Info(ctx, "btc", nil) }},
		{"qrcode with a numeric image", "GET /btc/qrcode/", `{"status":"success","qr_code":12}`,
			func(ctx context.Context, c *Client) (any, error) {
				return c.QRCode(ctx, "btc", &QRCodeOptions{Address: "3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub"})
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t)
			api.handle(tc.route, serveJSON(tc.body))
			v, err := tc.call(context.Background(), c)
			var de *DecodeError
			require.ErrorAs(t, err, &de, "got %v (%T)", err, v)
			assert.Equal(t, http.StatusOK, de.StatusCode)
			assert.NotEmpty(t, de.Op)
			assert.Contains(t, de.Error(), de.Op)
			assert.Equal(t, tc.body, string(de.Body))
			assert.Same(t, de.Err, errors.Unwrap(de))
			assert.Equal(t, 1, api.count(), "decode errors are not retried")
		})
	}
}

func TestDecodeErrorUnwrapsJSONErrors(t *testing.T) {
	de := &DecodeError{Op: "info", StatusCode: 200, Err: &json.UnmarshalTypeError{Value: "object", Field: "coin"}}
	var te *json.UnmarshalTypeError
	assert.ErrorAs(t, de, &te)
	assert.Contains(t, de.Error(), "cryptapi: info: unexpected response shape (HTTP 200)")
}

// TestSentinelsAreDistinct: every exported sentinel is its own error, so
// errors.Is can tell them apart.
func TestSentinelsAreDistinct(t *testing.T) {
	all := []error{
		ErrEmptyAPIKey, ErrAPIKeyRequired, ErrInvalidTicker, ErrCallbackRequired,
		ErrInvalidCallback, ErrAddressRequired, ErrInvalidOutputs, ErrInvalidConfirmations,
		ErrInvalidQRSize, ErrExpireTooSoon, ErrRequestTooLong, ErrInvalidValue,
		ErrInvalidOption, ErrResponseTooLarge,
	}
	for i, a := range all {
		assert.True(t, strings.HasPrefix(a.Error(), "cryptapi: "), a.Error())
		for j, b := range all {
			if i != j {
				assert.NotErrorIs(t, a, b)
			}
		}
	}
}

// TestLogsWithAnUnknownDateLayout: dates are informational; a layout the
// SDK does not know reads as the zero time and the payments still decode.
func TestLogsWithAnUnknownDateLayout(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /btc/logs/", serveJSON(`{"status":"success","callbacks":[{"uuid":"u","value_coin":"0.5","last_update":"yesterday","logs":[{"next_try":"soon","pending":0}]}]}`))
	l, err := c.Logs(context.Background(), "btc", "https://shop.example/cb")
	require.NoError(t, err)
	require.Len(t, l.Callbacks, 1)
	p := l.Callbacks[0]
	assert.True(t, p.LastUpdate.IsZero())
	assert.Equal(t, "0.5", p.ValueCoin.String())
	assert.True(t, p.Logs[0].NextTry.IsZero())
	assert.True(t, p.Confirmed(), "pending=0 without a confirmed field is a confirmed delivery")
}
