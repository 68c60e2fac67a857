package cryptapi

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/collect"
	"github.com/jarcoal/httpmock"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payoutInfoNumeric is the sample of the payout status answer with a
// numeric id and a numeric blockchain fee.
const payoutInfoNumeric = `{"status":"success","payout_info":{"id":2463,"status":"Done",
"from":"0x18B211A1Ba5880C7d62C250B6441C2400d588589",
"requests":{"0xA6B78B56ee062185E405a1DDDD18cE8fcBC4395d":"0.500000000000000000","0x18B211A1Ba5880C7d62C250B6441C2400d588589":0.1},
"total_requested":"0.6","total_with_fee":0.606,"total_fiat":"","fee":"0.006","blockchain_fee":0,
"coin":"polygon_pol","txid":"0xf9aa1618a7e460f8c68b6a02369b5058282c53a4ee23f967abef0d35203f328c",
"timestamp":"13/03/2024 18:10:35"}}`

// payoutInfoText is the same with a UUID id and every number as text.
const payoutInfoText = `{"status":"success","payout_info":{"id":"88e5eacc-d5a5-4b8a-8133-e23136151b7c","status":"Created",
"from":"","requests":{"0xA8EbeD50f2e05fB4a25b2DdCdc651A7CA769B5CF":"0.300000000000000000"},
"total_requested":"0.3","total_with_fee":"0.303","total_fiat":"1.25","fee":"0.003","blockchain_fee":"0.0001",
"coin":"bep20_usdt","txid":"","error":"None","timestamp":"05/03/2024 15:00:00"}}`

func TestPayoutInfoDecodesBothShapes(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		want PayoutInfo
	}{
		"numbers": {payoutInfoNumeric, PayoutInfo{
			ID: "2463", Status: PayoutDone, From: "0x18B211A1Ba5880C7d62C250B6441C2400d588589",
			Requests: map[string]decimal.Decimal{
				"0xA6B78B56ee062185E405a1DDDD18cE8fcBC4395d": mustDec("0.5"),
				"0x18B211A1Ba5880C7d62C250B6441C2400d588589": mustDec("0.1"),
			},
			TotalRequested: mustDec("0.6"), TotalWithFee: mustDec("0.606"), Fee: mustDec("0.006"),
			Coin: "polygon_pol", TxID: "0xf9aa1618a7e460f8c68b6a02369b5058282c53a4ee23f967abef0d35203f328c",
			Timestamp: time.Date(2024, 3, 13, 18, 10, 35, 0, time.UTC),
		}},
		"text": {payoutInfoText, PayoutInfo{
			ID: "88e5eacc-d5a5-4b8a-8133-e23136151b7c", Status: PayoutCreated,
			Requests:       map[string]decimal.Decimal{"0xA8EbeD50f2e05fB4a25b2DdCdc651A7CA769B5CF": mustDec("0.3")},
			TotalRequested: mustDec("0.3"), TotalWithFee: mustDec("0.303"), TotalFiat: mustDec("1.25"), Fee: mustDec("0.003"),
			BlockchainFee: mustDec("0.0001"), Coin: "bep20_usdt", Error: "None",
			Timestamp: time.Date(2024, 3, 5, 15, 0, 0, 0, time.UTC),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setupKey(t)
			api.handle("POST /payout/status/", serveJSON(tc.body))
			got, err := c.PayoutStatus(context.Background(), "2463")
			require.NoError(t, err)
			assert.Equal(t, tc.want.ID, got.ID)
			assert.Equal(t, tc.want.Status, got.Status)
			assert.Equal(t, tc.want.From, got.From)
			require.Len(t, got.Requests, len(tc.want.Requests))
			for a, v := range tc.want.Requests {
				assertDec(t, v.String(), got.Requests[a], a)
			}
			assertDec(t, tc.want.TotalRequested.String(), got.TotalRequested)
			assertDec(t, tc.want.TotalWithFee.String(), got.TotalWithFee)
			assertDec(t, tc.want.TotalFiat.String(), got.TotalFiat)
			assertDec(t, tc.want.Fee.String(), got.Fee)
			assertDec(t, tc.want.BlockchainFee.String(), got.BlockchainFee)
			assert.Equal(t, tc.want.Coin, got.Coin)
			assert.Equal(t, tc.want.TxID, got.TxID)
			assert.Equal(t, tc.want.Error, got.Error)
			assert.True(t, tc.want.Timestamp.Equal(got.Timestamp), "%v", got.Timestamp)

			req := api.last()
			assert.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"))
			form, err := url.ParseQuery(string(req.Body))
			require.NoError(t, err)
			assert.Equal(t, "2463", form.Get("payout_id"))
			assert.False(t, form.Has("apikey"), "the key travels in the query, not the body")
		})
	}
}

func TestSendPayouts(t *testing.T) {
	for name, answer := range map[string]string{
		"queued":           `{"status":"success","queued":true}`,
		"with payout_info": `{"status":"success","queued":true,"payout_info":{"id":"88e5eacc","status":"Pending Payment"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setupKey(t)
			api.handle("POST /bep20/usdt/payout/request/bulk/process/", serveJSON(answer))
			err := c.SendPayouts(context.Background(), "bep20_usdt", map[string]decimal.Decimal{
				"0xA6B78B56ee062185E405a1DDDD18cE8fcBC4395d": mustDec("0.5"),
			})
			require.NoError(t, err)
			req := api.last()
			assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
			assert.JSONEq(t, `{"outputs":{"0xA6B78B56ee062185E405a1DDDD18cE8fcBC4395d":0.5}}`, string(req.Body))
		})
	}
	c, api := setupKey(t)
	api.handle("POST /btc/payout/request/bulk/process/", serveBody(http.StatusOK, "application/json", []byte(`{"status":"error","error":"Insufficient balance"}`)))
	err := c.SendPayouts(context.Background(), "btc", map[string]decimal.Decimal{btcOut1: mustDec("1")})
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Insufficient balance", ae.Message)
}

func TestCreatePayoutFromRequestsAndProcess(t *testing.T) {
	c, api := setupKey(t)
	api.handle("POST /payout/create/", serveJSON(payoutInfoText))
	api.handle("POST /payout/process/", serveJSON(`{"status":"success","queued":true}`))
	ctx := context.Background()
	p, err := c.CreatePayoutFromRequests(ctx, []string{"52211", "42d5245e-0a29-402a-9a7e-355e38f1d81d"})
	require.NoError(t, err)
	form, err := url.ParseQuery(string(api.last().Body))
	require.NoError(t, err)
	assert.Equal(t, "52211,42d5245e-0a29-402a-9a7e-355e38f1d81d", form.Get("request_ids"))
	assert.Equal(t, PayoutCreated, p.Status)
	require.NoError(t, c.ProcessPayout(ctx, p.ID))
	form, err = url.ParseQuery(string(api.last().Body))
	require.NoError(t, err)
	assert.Equal(t, p.ID, form.Get("payout_id"))
}

func TestListPayouts(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /polygon/pol/payout/list/", serveJSON(`{"status":"success","payouts":[{"id":2460,"status":"Done","total_requested":"0.6","total_with_fee":"0.606","total_fiat":"","fee":"0.006","coin":"polygon_pol","timestamp":"13/03/2024 17:48:39"}],"num_pages":"3"}`))
	payouts, err := collect.All(c.ListPayouts(context.Background(), "polygon_pol", &ListPayoutsOptions{Status: "done", Page: 2}))
	require.NoError(t, err)
	require.Equal(t, 2, api.count(), "pages 2 and 3 of 3")
	q := api.last().Query
	assert.Equal(t, "done", q.Get("status"))
	assert.Equal(t, "3", q.Get("p"))
	require.Len(t, payouts, 2)
	assert.Equal(t, "2460", payouts[0].ID)
	assert.Equal(t, PayoutDone, payouts[0].Status)
	assertDec(t, "0.606", payouts[0].TotalWithFee)

	// A loop that stops early reads no further page.
	for range c.ListPayouts(context.Background(), "polygon_pol", nil) {
		break
	}
	assert.Equal(t, 3, api.count())
	assert.Equal(t, "1", api.last().Query.Get("p"), "the first page")
	assert.False(t, api.last().Query.Has("status"))
}

func TestListPayoutRequests(t *testing.T) {
	for name, body := range map[string]string{
		"requests":        `{"status":"success","requests":[{"id":103227,"address":"bc1qnkmhrluu3226nsszg5zpsque3hq8ag53gcp335","value":"0.01","status":"Pending","coin":"btc","timestamp":"13/03/2024 17:48:39","extra":1}],"num_pages":1}`,
		"payout_requests": `{"status":"success","payout_requests":[{"id":"103227","address":"bc1qnkmhrluu3226nsszg5zpsque3hq8ag53gcp335","amount":0.01,"status":"pending","coin":"btc"}],"num_pages":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, api := setupKey(t)
			api.handle("GET /btc/payout/request/list/", serveJSON(body))
			reqs, err := collect.All(c.ListPayoutRequests(context.Background(), "btc", &ListPayoutsOptions{Status: "all"}))
			require.NoError(t, err)
			assert.Equal(t, "all", api.last().Query.Get("status"))
			assert.Equal(t, 1, api.count(), "one page of one")
			require.Len(t, reqs, 1)
			r := reqs[0]
			assert.Equal(t, "103227", r.ID)
			assert.Equal(t, "bc1qnkmhrluu3226nsszg5zpsque3hq8ag53gcp335", r.Address)
			assertDec(t, "0.01", r.Value)
			assert.Equal(t, "pending", r.Status)
			assert.NotEmpty(t, r.Raw)
		})
	}
}

func TestPayoutWalletAndBalance(t *testing.T) {
	for name, balance := range map[string]string{"text": `"2.7"`, "number": `2.7`} {
		t.Run(name, func(t *testing.T) {
			c, api := setupKey(t)
			api.handle("GET /trc20/usdt/payout/address/", serveJSON(`{"address":"TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"}`))
			api.handle("GET /trc20/usdt/payout/balance/", serveJSON(`{"status":"success","balance":`+balance+`}`))
			w, err := c.PayoutWallet(context.Background(), "trc20/usdt")
			require.NoError(t, err)
			assert.Equal(t, "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", w.Address)
			b, err := c.PayoutBalance(context.Background(), "trc20_usdt")
			require.NoError(t, err)
			assertDec(t, "2.7", b)
		})
	}
	c, api := setupKey(t)
	api.handle("GET /btc/payout/balance/", serveJSON(`{"status":"success"}`))
	_, err := c.PayoutBalance(context.Background(), "btc")
	var de *DecodeError
	assert.ErrorAs(t, err, &de, "an answer without a balance is not a zero balance")
}

func TestPayoutOperationsRefusedBeforeNetwork(t *testing.T) {
	ctx := context.Background()
	keyless, api := setup(t)
	outs := map[string]decimal.Decimal{btcOut1: mustDec("1")}
	checks := []error{
		keyless.SendPayouts(ctx, "btc", outs),
		keyless.ProcessPayout(ctx, "1"),
	}
	_, err := keyless.CreatePayoutFromRequests(ctx, []string{"1"})
	checks = append(checks, err)
	_, err = keyless.PayoutStatus(ctx, "1")
	checks = append(checks, err)
	_, err = collect.All(keyless.ListPayouts(ctx, "btc", nil))
	checks = append(checks, err)
	_, err = collect.All(keyless.ListPayoutRequests(ctx, "btc", nil))
	checks = append(checks, err)
	_, err = keyless.PayoutWallet(ctx, "btc")
	checks = append(checks, err)
	_, err = keyless.PayoutBalance(ctx, "btc")
	checks = append(checks, err)
	for i, err := range checks {
		assert.ErrorIs(t, err, ErrAPIKeyRequired, "call %d", i)
	}
	assert.Zero(t, api.count())

	c, kapi := setupKey(t)
	_, err = c.CreatePayoutFromRequests(ctx, nil)
	assert.ErrorIs(t, err, ErrInvalidOption)
	for _, bad := range []string{"", "1,2", "1 2", "../x", "a&apikey=x", string(make([]byte, MaxPayoutIDLen+1))} {
		_, err = c.CreatePayoutFromRequests(ctx, []string{"1", bad})
		assert.ErrorIs(t, err, ErrInvalidOption, "%q", bad)
		assert.ErrorIs(t, c.ProcessPayout(ctx, bad), ErrInvalidOption, "%q", bad)
		_, err = c.PayoutStatus(ctx, bad)
		assert.ErrorIs(t, err, ErrInvalidOption, "%q", bad)
	}
	assert.ErrorIs(t, c.SendPayouts(ctx, "btc", nil), ErrAddressRequired)
	assert.ErrorIs(t, c.SendPayouts(ctx, "btc", map[string]decimal.Decimal{btcOut1: decimal.Zero}), ErrInvalidValue)
	assert.ErrorIs(t, c.SendPayouts(ctx, "no/such/ticker", outs), ErrInvalidTicker)
	_, err = collect.All(c.ListPayouts(ctx, "btc", &ListPayoutsOptions{Page: -1}))
	assert.ErrorIs(t, err, ErrInvalidOption)
	_, err = collect.All(c.ListPayouts(ctx, "btc", &ListPayoutsOptions{Status: "done&apikey=x"}))
	assert.ErrorIs(t, err, ErrInvalidOption)
	assert.Zero(t, kapi.count())
}

// TestPayoutMoneyCallsGoOutAtMostOnce: a server that fails the first
// attempt, with every retryable status and with a dropped connection, sees
// exactly one request of each call that moves money, however many retries
// the client allows.
func TestPayoutMoneyCallsGoOutAtMostOnce(t *testing.T) {
	outs := map[string]decimal.Decimal{btcOut1: mustDec("1")}
	calls := map[string]struct {
		route string
		call  func(*Client) error
	}{
		"CreatePayouts": {"POST /btc/payout/request/bulk/", func(c *Client) error {
			_, err := c.CreatePayouts(context.Background(), "btc", outs)
			return err
		}},
		"SendPayouts": {"POST /btc/payout/request/bulk/process/", func(c *Client) error {
			return c.SendPayouts(context.Background(), "btc", outs)
		}},
		"CreatePayoutFromRequests": {"POST /payout/create/", func(c *Client) error {
			_, err := c.CreatePayoutFromRequests(context.Background(), []string{"1", "2"})
			return err
		}},
		"ProcessPayout": {"POST /payout/process/", func(c *Client) error {
			return c.ProcessPayout(context.Background(), "7")
		}},
		"CreatePayout": {"GET /btc/payout/request/create/", func(c *Client) error {
			_, err := c.CreatePayout(context.Background(), "btc", &PayoutOptions{Address: btcOut1, Value: mustDec("1")})
			return err
		}},
	}
	failures := map[string]httpmock.Responder{
		"503":     serveBody(http.StatusServiceUnavailable, "", nil),
		"429":     serveBody(http.StatusTooManyRequests, "", nil),
		"502":     serveBody(http.StatusBadGateway, "", nil),
		"504":     serveBody(http.StatusGatewayTimeout, "", nil),
		"hang up": dropConnection,
	}
	for name, tc := range calls {
		for fname, fail := range failures {
			t.Run(name+"/"+fname, func(t *testing.T) {
				c, api := setupKey(t, WithRetry(5, 0, 0))
				var n atomic.Int32
				api.handle(tc.route, func(r *http.Request) (*http.Response, error) {
					if n.Add(1) == 1 {
						return fail(r)
					}
					return serveJSON(`{"status":"success","queued":true,"request_ids":[1],"payout_info":{"id":1}}`)(r)
				})
				err := tc.call(c)
				assert.Error(t, err, "the first attempt failed: its outcome must be reported, not retried")
				assert.Equal(t, 1, api.count(), "exactly one request reached the service")
			})
		}
	}
}

// TestPayoutReadsAreRetried: reads are retried like other reads, also the
// status read the service takes as a POST, and its body goes out whole on
// the retry.
func TestPayoutReadsAreRetried(t *testing.T) {
	reads := map[string]struct {
		route, answer string
		call          func(*Client) error
	}{
		"PayoutStatus": {"POST /payout/status/", payoutInfoNumeric, func(c *Client) error {
			_, err := c.PayoutStatus(context.Background(), "2463")
			return err
		}},
		"ListPayouts": {"GET /btc/payout/list/", `{"status":"success","payouts":[],"num_pages":0}`, func(c *Client) error {
			_, err := collect.All(c.ListPayouts(context.Background(), "btc", nil))
			return err
		}},
		"ListPayoutRequests": {"GET /btc/payout/request/list/", `{"status":"success","requests":[],"num_pages":0}`, func(c *Client) error {
			_, err := collect.All(c.ListPayoutRequests(context.Background(), "btc", nil))
			return err
		}},
		"PayoutWallet": {"GET /btc/payout/address/", `{"address":"bc1qnkmhrluu3226nsszg5zpsque3hq8ag53gcp335"}`, func(c *Client) error {
			_, err := c.PayoutWallet(context.Background(), "btc")
			return err
		}},
		"PayoutBalance": {"GET /btc/payout/balance/", `{"status":"success","balance":"1"}`, func(c *Client) error {
			_, err := c.PayoutBalance(context.Background(), "btc")
			return err
		}},
	}
	for name, tc := range reads {
		t.Run(name, func(t *testing.T) {
			c, api := setupKey(t, WithRetry(3, 0, 0))
			var n atomic.Int32
			api.handle(tc.route, func(r *http.Request) (*http.Response, error) {
				if n.Add(1) == 1 {
					return serveBody(http.StatusServiceUnavailable, "", nil)(r)
				}
				return serveJSON(tc.answer)(r)
			})
			require.NoError(t, tc.call(c))
			assert.Equal(t, 2, api.count())
			if name == "PayoutStatus" {
				assert.Equal(t, "payout_id=2463", string(api.last().Body), "the retried POST carries its body")
			}
		})
	}
}
