package cryptapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const logsCallback = "https://shop.example/cryptapi/callback?order_id=1042&nonce=Yq3v8sPzK2"

func TestLogs(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /btc/logs/", serveFixture(t, "logs.json"))
		l, err := c.Logs(context.Background(), "btc", logsCallback)
		require.NoError(t, err)
		req := api.last()
		assert.Equal(t, "/btc/logs/", req.Path)
		assert.Equal(t, logsCallback, req.Query.Get("callback"), "the callback URL is sent exactly as given")

		assert.Equal(t, btcIn, l.AddressIn)
		assert.Equal(t, btcOut1, l.AddressOut)
		require.Len(t, l.Outputs, 1)
		assert.Equal(t, btcOut1, l.Outputs[0].Address)
		assert.Equal(t, logsCallback, l.CallbackURL)
		assert.Equal(t, "success", l.Status)
		assert.True(t, l.NotifyPending)
		assert.Equal(t, 1, l.NotifyConfirmations)
		assert.Equal(t, "default", l.Priority)
		require.Len(t, l.Callbacks, 2)

		done := l.Callbacks[0]
		assert.Equal(t, "afe11bd2-7c2e-4d31-9a4b-6e2a2b0c1d44", done.UUID)
		assert.Equal(t, time.Date(2021, 7, 14, 11, 55, 7, 0, time.UTC), done.LastUpdate)
		assert.Equal(t, ResultDone, done.Result)
		assert.True(t, done.Result.Known())
		assertDec(t, "1", done.FeePercent)
		assertDec(t, "2500", done.Fee)
		assertDec(t, "0.000025", done.FeeCoin)
		assertDec(t, "33015.21", done.Price)
		assert.Empty(t, done.Prices)
		assertDec(t, "250000", done.Value)
		assertDec(t, "0.0025", done.ValueCoin)
		assertDec(t, "247500", done.ValueForwarded)
		assertDec(t, "0.002475", done.ValueForwardedCoin)
		assert.Equal(t, 1, done.Confirmations)
		assert.Equal(t, "a2174ffd39289100709f2a07b129cdbba69df2e22e5be1830221dab1fd4e332c", done.TxIDIn)
		assert.Equal(t, "3ca4a4ba0d1a8a5c6b3fe1d26c1d36cf79cbbca1c07a4c8a1bd6e98b1e1a2d3f", done.TxIDOut)
		assert.True(t, done.Confirmed())
		require.Len(t, done.Logs, 3)

		pendingLog := done.Logs[0]
		assert.True(t, pendingLog.Pending)
		assert.False(t, pendingLog.Confirmed)
		assert.Equal(t, "*ok*", pendingLog.Responses)
		assert.Equal(t, "200", pendingLog.ResponseStatus)
		assert.True(t, pendingLog.NextTry.IsZero(), "next_try null")
		assert.Equal(t, url.Values{"order_id": {"1042"}, "nonce": {"Yq3v8sPzK2"}}, pendingLog.CustomParams())

		failed := done.Logs[1]
		assert.False(t, failed.Pending)
		assert.True(t, failed.Confirmed)
		assert.Equal(t, "500", failed.ResponseStatus)
		assert.Equal(t, "Internal Server Error", failed.Responses)
		assert.Equal(t, time.Date(2021, 7, 14, 11, 56, 7, 0, time.UTC), failed.NextTry)
		assert.True(t, done.Logs[2].NextTry.IsZero(), `next_try ""`)

		pending := l.Callbacks[1]
		assert.Empty(t, pending.UUID, "identify it by txid_in and value_coin")
		assert.Equal(t, ResultPending, pending.Result)
		assert.Equal(t, time.Date(2021, 7, 15, 8, 2, 41, 0, time.UTC), pending.LastUpdate)
		assertDec(t, "1.0", pending.FeePercent)
		assert.True(t, pending.FeeCoin.IsZero(), "null")
		assert.True(t, pending.Fee.IsZero(), "null")
		assertDec(t, "33120.50", pending.Price)
		assertDec(t, "0.0015", pending.ValueCoin)
		assert.True(t, pending.ValueForwardedCoin.IsZero(), `""`)
		assert.True(t, pending.ValueForwarded.IsZero(), `""`)
		assert.Equal(t, 0, pending.Confirmations)
		assert.Empty(t, pending.TxIDOut)
		require.Len(t, pending.Logs, 1)
		assert.True(t, pending.Logs[0].Pending, "pending: 1")
		assert.False(t, pending.Logs[0].Confirmed, "taken as the opposite of pending")
		assert.Equal(t, "504", pending.Logs[0].ResponseStatus)
		assert.False(t, pending.Confirmed())
	})
}

// TestLogsTokenAnswer: 18-decimal amounts beyond 64 bits, exponent form,
// flags and counts as strings, a prices map and a single-quoted
// address_out.
func TestLogsTokenAnswer(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /bep20/usdt/logs/", serveFixture(t, "logs_bep20_token.json"))
	l, err := c.Logs(context.Background(), "bep20_usdt", "https://shop.example/cryptapi/callback?order_id=3100&v=2")
	require.NoError(t, err)
	assert.False(t, l.NotifyPending, `"0"`)
	assert.Equal(t, 3, l.NotifyConfirmations, `"3"`)
	require.Len(t, l.Outputs, 2)
	assert.Equal(t, "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c", l.Outputs[0].Address)
	assertDec(t, "0.5", l.Outputs[1].Share)
	require.Len(t, l.Callbacks, 1)
	p := l.Callbacks[0]
	assertDec(t, "15000000000000000000", p.Fee)
	assertDec(t, "1500000000000000000000", p.Value)
	assert.Equal(t, "1500000000000000000000", p.Value.String(), "exact beyond 64 bits")
	assertDec(t, "1485000000000000000000", p.ValueForwarded)
	assertDec(t, "1500", p.ValueCoin)
	assertDec(t, "1485", p.ValueForwardedCoin)
	assertDec(t, "15", p.FeeCoin)
	assert.True(t, p.Price.IsZero())
	assertDec(t, "1.0003", p.Prices["USD"])
	assertDec(t, "0.9611", p.Prices["EUR"])
	assert.Equal(t, 3, p.Confirmations)
	assert.Equal(t, ResultSent, p.Result)
	assert.Equal(t, time.Date(2025, 1, 2, 23, 59, 59, 0, time.UTC), p.LastUpdate)
	require.Len(t, p.Logs, 1)
	assert.Equal(t, "Not Found", p.Logs[0].Responses, "the response field is read too")
	assert.Equal(t, "404", p.Logs[0].ResponseStatus, "a numeric status is kept as text")
	assert.True(t, p.Confirmed())
	assert.Equal(t, url.Values{"order_id": {"3100"}, "v": {"2"}}, p.Logs[0].CustomParams())
}

// TestLogsWithoutPayments: the service says "no payments" in two ways. A
// success with callbacks [] is empty logs and no error; its "nothing
// found" error (HTTP 200 or 404) is an error matching ErrNoLogs. Every
// other failure, also an error answered with HTTP 200 that mentions
// something not found, is an error that does not match ErrNoLogs.
func TestLogsWithoutPayments(t *testing.T) {
	for name, h := range map[string]httpmock.Responder{
		"callbacks []":       serveJSON(`{"status":"success","callback_url":"https://shop.example/unknown","address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs","address_out":"bc1q5wg5duprkhryy5ks5yas5zd69d00ky2duhkmx4","notify_pending":false,"notify_confirmations":1,"priority":"default","callbacks":[]}`),
		"no callbacks field": serveJSON(`{"status":"success","address_in":"bc1ql9mrhyc6f7k03ry2rsw65cdnasnff9fyvqadgs"}`),
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setup(t)
			api.handle("GET /btc/logs/", h)
			l, err := c.Logs(context.Background(), "btc", "https://shop.example/unknown")
			require.NoError(t, err)
			require.NotNil(t, l)
			assert.NotNil(t, l.Callbacks)
			assert.Empty(t, l.Callbacks)
			assert.Equal(t, 1, api.count())
		})
	}
	for name, h := range map[string]httpmock.Responder{
		"nothing found 200": serveBody(http.StatusOK, "application/json", []byte(`{"status":"error","error":"No request or no payment callbacks found"}`)),
		"nothing found 404": serveBody(http.StatusNotFound, "application/json", []byte(`{"status": "error", "error": "No request or no payment callbacks found."}`)),
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setup(t)
			api.handle("GET /btc/logs/", h)
			l, err := c.Logs(context.Background(), "btc", "https://shop.example/unknown")
			assert.Nil(t, l)
			require.ErrorIs(t, err, ErrNoLogs)
			var ae *APIError
			assert.ErrorAs(t, err, &ae)
		})
	}
	for name, h := range map[string]httpmock.Responder{
		"bad callback":     serveBody(http.StatusBadRequest, "application/json", []byte(`{"status":"error","error":"Invalid callback URL"}`)),
		"404 not found":    serveBody(http.StatusNotFound, "application/json", []byte(`{"detail":"Not found."}`)),
		"404 other found":  serveBody(http.StatusNotFound, "application/json", fixture(t, "error_message.json")),
		"gateway":          serveFixture(t, "gateway_502.html"),
		"error 200 other":  serveBody(http.StatusOK, "application/json", []byte(`{"status":"error","error":"Request could not be processed, try later"}`)),
		"bad key 200":      serveBody(http.StatusOK, "application/json", []byte(`{"status":"error","error":"No API key found for this request"}`)),
		"challenge 200":    serveBody(http.StatusOK, "text/html", []byte(`<html><title>Just a moment...</title>No request or no payment callbacks found</html>`)),
		"message field":    serveBody(http.StatusOK, "application/json", []byte(`{"status":"error","message":"No request or no payment callbacks found"}`)),
		"status not error": serveBody(http.StatusNotFound, "application/json", []byte(`{"status":"fail","error":"No request or no payment callbacks found"}`)),
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setup(t, WithRetry(0, 0, 0))
			api.handle("GET /btc/logs/", h)
			l, err := c.Logs(context.Background(), "btc", "https://shop.example/unknown")
			assert.Nil(t, l)
			var ae *APIError
			assert.ErrorAs(t, err, &ae)
			assert.NotErrorIs(t, err, ErrNoLogs)
		})
	}
}

func TestLogsValidationBeforeNetwork(t *testing.T) {
	c, api := setup(t)
	ctx := context.Background()
	_, err := c.Logs(ctx, "btc", "")
	assert.ErrorIs(t, err, ErrCallbackRequired)
	_, err = c.Logs(ctx, "btc", "shop.example/cb")
	assert.ErrorIs(t, err, ErrInvalidCallback)
	_, err = c.Logs(ctx, "btc", "https://shop.example/cb#frag")
	assert.ErrorIs(t, err, ErrInvalidCallback)
	_, err = c.Logs(ctx, "../btc", "https://shop.example/cb")
	assert.ErrorIs(t, err, ErrInvalidTicker)
	assert.Zero(t, api.count())
}

func TestPaymentConfirmedRule(t *testing.T) {
	cases := []struct {
		name string
		logs string
		want bool
	}{
		{"no deliveries", `[]`, false},
		{"pending only", `[{"pending": true, "confirmed": false}]`, false},
		{"pending 1 only", `[{"pending": 1}]`, false},
		{"confirmed delivery", `[{"pending": true}, {"pending": false, "confirmed": true}]`, true},
		{"pending 0 means confirmed", `[{"pending": 0}]`, true},
		{"confirmed as text", `[{"pending": "false", "confirmed": "true"}]`, true},
		{"both flags set is not confirmed", `[{"pending": true, "confirmed": true}]`, false},
		{"no flags at all", `[{"responses": "*ok*"}]`, false},
	}
	for _, tc := range cases {
		var p LoggedPayment
		require.NoError(t, json.Unmarshal([]byte(`{"result":"done","logs":`+tc.logs+`}`), &p), tc.name)
		assert.Equal(t, tc.want, p.Confirmed(), tc.name)
		assert.Equal(t, ResultDone, p.Result, "the result alone does not decide")
	}
}

func TestResultKnown(t *testing.T) {
	for _, r := range []Result{ResultPending, ResultSent, ResultDone} {
		assert.True(t, r.Known(), r)
	}
	var p LoggedPayment
	require.NoError(t, json.Unmarshal([]byte(`{"result":"refunded"}`), &p))
	assert.Equal(t, Result("refunded"), p.Result, "unknown results are kept")
	assert.False(t, p.Result.Known())
}

// TestPaymentLenientFields: null, empty, numbers as text and the empty
// prices forms decode without failing the whole answer.
func TestPaymentLenientFields(t *testing.T) {
	cases := []string{
		`{"prices": null}`, `{"prices": []}`, `{"prices": {}}`, `{"prices": ""}`,
		`{"value_coin": null, "fee_coin": "", "confirmations": null, "last_update": null, "logs": null}`,
		`{"uuid": 12345, "txid_in": null, "confirmations": "2.0"}`,
		`{"unknown_field": {"nested": [1, 2]}, "result": "done"}`,
	}
	for _, in := range cases {
		var p LoggedPayment
		assert.NoError(t, json.Unmarshal([]byte(in), &p), in)
	}
	var p LoggedPayment
	require.NoError(t, json.Unmarshal([]byte(`{"uuid": 12345, "confirmations": "2.0"}`), &p))
	assert.Equal(t, "12345", p.UUID)
	assert.Equal(t, 2, p.Confirmations)
}

func TestLogEntryCustomParams(t *testing.T) {
	e := LogEntry{RequestURL: "https://shop.example/cb?order_id=7&uuid=u&value_coin=1&pending=0&coin=btc&tag=a&tag=b"}
	assert.Equal(t, url.Values{"order_id": {"7"}, "tag": {"a", "b"}}, e.CustomParams())
	assert.Empty(t, (&LogEntry{RequestURL: "%zz"}).CustomParams())
	assert.Empty(t, (&LogEntry{}).CustomParams())
}

// FuzzLogsDecode: decoding any bytes into Logs never panics, and a
// successful decode keeps its invariants.
func FuzzLogsDecode(f *testing.F) {
	for _, name := range []string{"logs.json", "logs_bep20_token.json", "error_message.json", "create_multi.json"} {
		f.Add(fixture(f, name))
	}
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"callbacks":[{"logs":[{}]}]}`, `{"callbacks":[{"prices":[]}]}`,
		`{"callbacks":[{"value":1e999}]}`, `{"callbacks":[{"value":"9.5187e+24"}]}`,
		`{"callbacks":[{"last_update":"31/12/2099 23:59:59"}]}`, `{"address_out":"{\"a\": 0.5, \"b\": 0.5}"}`,
		`{"notify_pending":"yes","notify_confirmations":"1e1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l Logs
		if err := json.Unmarshal(b, &l); err != nil {
			return
		}
		for _, o := range l.Outputs {
			if o.Address == "" || !validAddressText(o.Address) {
				t.Fatalf("bad output address %q", o.Address)
			}
		}
		for _, p := range l.Callbacks {
			_ = p.Confirmed()
			for _, e := range p.Logs {
				_ = e.CustomParams()
			}
		}
	})
}
