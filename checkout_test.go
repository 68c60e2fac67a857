package cryptapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const successToken = "fG78jtx96ugjtu0eDRaWiYH6s0oxrJBK0ki9HpG7ySVXmjWg1dUkJfvhvqnjqbM7"

var testNow = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

func TestCreateCheckout(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t, WithClock(ClockFunc(func() time.Time { return testNow })))
		api.handle("GET /checkout/request/", serveFixture(t, "checkout.json"))
		co, err := c.CreateCheckout(context.Background(), &CheckoutOptions{
			RedirectURL:     "https://shop.example/thanks?order_id=1042",
			NotifyURL:       "https://shop.example/ipn?order_id=1042",
			Value:           mustDec("49.90"),
			ItemDescription: "Order #1042",
			ExpireAt:        testNow.Add(2 * time.Hour),
			Post:            true,
		})
		if !f.key {
			assert.ErrorIs(t, err, ErrAPIKeyRequired)
			assert.Nil(t, co)
			assert.Zero(t, api.count(), "checkout needs a key in both forms")
			return
		}
		require.NoError(t, err)
		q := api.last().Query
		assert.Equal(t, "https://shop.example/thanks?order_id=1042", q.Get("redirect_url"))
		assert.Equal(t, "https://shop.example/ipn?order_id=1042", q.Get("notify_url"))
		assert.Equal(t, "49.9", q.Get("value"))
		assert.Equal(t, "Order #1042", q.Get("item_description"))
		assert.Equal(t, strconv.FormatInt(testNow.Add(2*time.Hour).Unix(), 10), q.Get("expire_at"))
		assert.Equal(t, "1", q.Get("post"))

		assert.Equal(t, "https://pay.blockbee.io/payment/OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2/", co.PaymentURL)
		assert.Equal(t, "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2", co.PaymentID)
		assert.Equal(t, successToken, co.SuccessToken)
		assert.Equal(t, "success", co.Status)
	})
}

func TestCreateCheckoutMinimal(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /checkout/request/", serveFixture(t, "checkout.json"))
	_, err := c.CreateCheckout(context.Background(), &CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: mustDec("10")})
	require.NoError(t, err)
	q := api.last().Query
	for _, absent := range []string{"notify_url", "item_description", "expire_at", "post"} {
		assert.False(t, q.Has(absent), absent)
	}
}

// TestCheckoutHidesSuccessToken: the token is for the merchant's systems;
// no formatting verb prints it.
func TestCheckoutHidesSuccessToken(t *testing.T) {
	co := &Checkout{PaymentURL: "https://pay.example/p/1/", PaymentID: "1", SuccessToken: successToken, Status: "success"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d"} {
		for _, v := range []any{co, *co, []Checkout{*co}, map[string]*Checkout{"a": co}} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, successToken, "%s of %T", verb, v)
			assert.Contains(t, out, "https://pay.example/p/1/", "%s of %T", verb, v)
		}
	}
}

// TestCheckoutExpiry: the expiry must be at least an hour ahead by the
// client's clock; an earlier one never leaves the process.
func TestCheckoutExpiry(t *testing.T) {
	clock := func() time.Time { return testNow }
	cases := []struct {
		name     string
		expireAt time.Time
		want     error
	}{
		{"in the past", testNow.Add(-time.Minute), ErrExpireTooSoon},
		{"now", testNow, ErrExpireTooSoon},
		{"59 minutes", testNow.Add(59 * time.Minute), ErrExpireTooSoon},
		{"one hour less a second", testNow.Add(time.Hour - time.Second), ErrExpireTooSoon},
		{"exactly one hour", testNow.Add(time.Hour), ErrExpireTooSoon},
		{"one hour and a minute", testNow.Add(time.Hour + time.Minute), ErrExpireTooSoon},
		{"one hour and the margin", testNow.Add(time.Hour + CheckoutExpiryMargin), nil},
		{"a day", testNow.Add(24 * time.Hour), nil},
		{"never", time.Time{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setupKey(t, WithClock(ClockFunc(clock)))
			api.handle("GET /checkout/request/", serveFixture(t, "checkout.json"))
			_, err := c.CreateCheckout(context.Background(), &CheckoutOptions{
				RedirectURL: "https://shop.example/thanks", Value: mustDec("1"), ExpireAt: tc.expireAt,
			})
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
				assert.Zero(t, api.count())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, !tc.expireAt.IsZero(), api.last().Query.Has("expire_at"))
		})
	}
}

// TestCheckoutExpiryStillAnHourWhenItArrives: the service checks
// expire_at against its own clock when the request arrives. A request that
// takes 30 seconds to get there must still carry an hour: the SDK never
// sends an expiry the service refuses.
func TestCheckoutExpiryStillAnHourWhenItArrives(t *testing.T) {
	testNow := time.Date(2026, 3, 1, 12, 0, 0, 500e6, time.UTC)
	arrival := testNow.Add(30 * time.Second)
	cases := []struct {
		name string
		opts CheckoutOptions
		want time.Time // expiry sent; zero for refused before sending
	}{
		{"ExpiresIn one hour", CheckoutOptions{ExpiresIn: time.Hour}, testNow.Add(time.Hour + CheckoutExpiryMargin + time.Second/2)},
		{"ExpiresIn two hours", CheckoutOptions{ExpiresIn: 2 * time.Hour}, testNow.Add(2*time.Hour + time.Second/2)},
		{"ExpireAt one hour", CheckoutOptions{ExpireAt: testNow.Add(time.Hour)}, time.Time{}},
		{"ExpiresIn 59 minutes", CheckoutOptions{ExpiresIn: 59 * time.Minute}, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setupKey(t, WithClock(ClockFunc(func() time.Time { return testNow })))
			api.handle("GET /checkout/request/", func(r *http.Request) (*http.Response, error) {
				sec, err := strconv.ParseInt(r.URL.Query().Get("expire_at"), 10, 64)
				if err != nil || time.Unix(sec, 0).Before(arrival.Add(time.Hour)) {
					return serveBody(http.StatusBadRequest, "application/json", []byte(`{"status":"error","error":"expire_at must be at least one hour ahead"}`))(r)
				}
				return serveFixture(t, "checkout.json")(r)
			})
			o := tc.opts
			o.RedirectURL, o.Value = "https://shop.example/thanks", mustDec("1")
			_, err := c.CreateCheckout(context.Background(), &o)
			if tc.want.IsZero() {
				assert.ErrorIs(t, err, ErrExpireTooSoon)
				assert.Zero(t, api.count(), "refused before the network")
				return
			}
			require.NoError(t, err, "the service accepted the expiry on arrival")
			assert.Equal(t, strconv.FormatInt(tc.want.Unix(), 10), api.last().Query.Get("expire_at"), "whole seconds, rounded up")
		})
	}
	c, api := setupKey(t)
	_, err := c.CreateCheckout(context.Background(), &CheckoutOptions{
		RedirectURL: "https://shop.example/thanks", Value: mustDec("1"), ExpiresIn: 2 * time.Hour, ExpireAt: time.Now().Add(3 * time.Hour),
	})
	assert.ErrorIs(t, err, ErrInvalidOption, "ExpireAt and ExpiresIn together")
	assert.Zero(t, api.count())
}

func TestCheckoutCurrency(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /checkout/request/", serveFixture(t, "checkout.json"))
	_, err := c.CreateCheckout(context.Background(), &CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: mustDec("12.5"), Currency: "eur"})
	require.NoError(t, err)
	assert.Equal(t, "eur", api.last().Query.Get("currency"))
	_, err = c.CreateCheckout(context.Background(), &CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: mustDec("12.5")})
	require.NoError(t, err)
	assert.False(t, api.last().Query.Has("currency"), "the dashboard's currency when empty")
	_, err = c.CreateCheckout(context.Background(), &CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: mustDec("1"), Currency: "eu r"})
	assert.ErrorIs(t, err, ErrInvalidOption)
	assert.Equal(t, 2, api.count())
}

func TestCreateCheckoutValidationBeforeNetwork(t *testing.T) {
	cases := []struct {
		name string
		opts *CheckoutOptions
		want error
	}{
		{"nil options", nil, ErrInvalidOption},
		{"no redirect", &CheckoutOptions{Value: mustDec("1")}, ErrInvalidOption},
		{"relative redirect", &CheckoutOptions{RedirectURL: "/thanks", Value: mustDec("1")}, ErrInvalidOption},
		{"bad notify", &CheckoutOptions{RedirectURL: "https://shop.example/thanks", NotifyURL: "ipn", Value: mustDec("1")}, ErrInvalidOption},
		{"no value", &CheckoutOptions{RedirectURL: "https://shop.example/thanks"}, ErrInvalidValue},
		{"negative value", &CheckoutOptions{RedirectURL: "https://shop.example/thanks", Value: mustDec("-1")}, ErrInvalidValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setupKey(t)
			api.handle("GET /checkout/request/", serveFixture(t, "checkout.json"))
			co, err := c.CreateCheckout(context.Background(), tc.opts)
			assert.ErrorIs(t, err, tc.want)
			assert.Nil(t, co)
			assert.Zero(t, api.count())
		})
	}
}

func TestCreateDeposit(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /deposit/request/", serveFixture(t, "deposit.json"))
		d, err := c.CreateDeposit(context.Background(), &DepositOptions{
			NotifyURL: "https://shop.example/ipn?user=7", ItemDescription: "Wallet top-up", Post: true,
		})
		if !f.key {
			assert.ErrorIs(t, err, ErrAPIKeyRequired)
			assert.Zero(t, api.count())
			return
		}
		require.NoError(t, err)
		q := api.last().Query
		assert.Equal(t, "https://shop.example/ipn?user=7", q.Get("notify_url"))
		assert.Equal(t, "Wallet top-up", q.Get("item_description"))
		assert.Equal(t, "1", q.Get("post"))
		assert.Equal(t, "https://pay.blockbee.io/deposit/Q2uN8x4mZsVb1cLk9eJr7TyW3pHd6fGa/", d.PaymentURL)
		assert.Equal(t, "Q2uN8x4mZsVb1cLk9eJr7TyW3pHd6fGa", d.PaymentID)
		assert.Equal(t, "success", d.Status)
	})
}

func TestCreateDepositValidationBeforeNetwork(t *testing.T) {
	c, api := setupKey(t)
	api.handle("GET /deposit/request/", serveFixture(t, "deposit.json"))
	for _, o := range []*DepositOptions{nil, {}, {NotifyURL: " "}, {NotifyURL: "ipn"}, {NotifyURL: "https://shop.example/ipn#x"}} {
		d, err := c.CreateDeposit(context.Background(), o)
		assert.ErrorIs(t, err, ErrInvalidOption)
		assert.Nil(t, d)
	}
	assert.Zero(t, api.count())
}

func TestCheckoutLogsFlatShape(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /checkout/logs/", serveFixture(t, "checkout_logs.json"))
		l, err := c.CheckoutLogs(context.Background(), "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2")
		if !f.key {
			assert.ErrorIs(t, err, ErrAPIKeyRequired)
			assert.Zero(t, api.count())
			return
		}
		require.NoError(t, err)
		assert.Equal(t, "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2", api.last().Query.Get("token"))
		assert.Equal(t, "success", l.Status)
		assert.True(t, l.Paid())
		assertDec(t, "49.90", l.Value)
		assert.Equal(t, "usd", l.Currency)
		assertDec(t, "0.00075901", l.PaidAmount)
		assert.Equal(t, "btc", l.PaidCoin)
		assertDec(t, "65743.52", l.ExchangeRate)
		assert.Equal(t, []string{
			"a2174ffd39289100709f2a07b129cdbba69df2e22e5be1830221dab1fd4e332c",
			"7d9c0b4e2f61a3b58c7e0d12f4a6b8c9e1f203a4b5c6d7e8f9a0b1c2d3e4f5a6",
		}, l.TxIDs)
		require.Len(t, l.Notifications, 1)
		n := l.Notifications[0]
		assert.Equal(t, "https://shop.example/ipn?order_id=1042", n.RequestURL)
		assert.Equal(t, "*ok*", n.Responses)
		assert.Equal(t, "200", n.ResponseStatus)
		assert.Equal(t, time.Date(2024, 5, 21, 9, 20, 11, 0, time.UTC), n.Timestamp)
		assert.True(t, n.NextTry.IsZero())
		assert.JSONEq(t, string(fixture(t, "checkout_logs.json")), string(l.Raw))
	})
}

// TestCheckoutLogsPublishedShape decodes the shape the API-key service's
// libraries publish, with the flags as booleans and as "0"/"1" text.
func TestCheckoutLogsPublishedShape(t *testing.T) {
	for name, fx := range map[string]string{"booleans": "checkout_logs_published.json", "text flags": "checkout_logs_published_text.json"} {
		t.Run(name, func(t *testing.T) {
			c, api := setupKey(t)
			api.handle("GET /checkout/logs/", serveFixture(t, fx))
			l, err := c.CheckoutLogs(context.Background(), "OcRrZGsKI8VOm6vF3mVGyGvBXXo5pXa2")
			require.NoError(t, err)
			assert.False(t, l.IsPaid)
			assert.False(t, l.Paid())
			assert.True(t, l.IsPartial)
			assert.False(t, l.IsPending)
			assert.False(t, l.IsExpired)
			require.Len(t, l.PaymentData, 2)
			d := l.PaymentData[0]
			assert.Equal(t, "btc", d.Coin)
			assertDec(t, "0.000137", d.Value)
			assertDec(t, "0.0001", d.ValuePaid)
			assertDec(t, "0.000037", d.ValueOutstanding)
			assertDec(t, "0.0000137489", d.ExchangeRate)
			assert.Equal(t, []string{"a2174ffd39289100709f2a07b129cdbba69df2e22e5be1830221dab1fd4e332c"}, d.TxIDs)
			assert.Empty(t, l.PaymentData[1].TxIDs)
			assert.Equal(t, d.TxIDs, l.TxIDs, "TxIDs gathers the entries' transactions")
			require.Len(t, l.Notifications, 1)
			assert.Equal(t, "*ok*", l.Notifications[0].Responses)
		})
	}
}

func TestDepositLogs(t *testing.T) {
	for name, fx := range map[string]string{"empty": "deposit_logs_empty.json", "two deposits": "deposit_logs.json"} {
		t.Run(name, func(t *testing.T) {
			eachForm(t, func(t *testing.T, f form) {
				c, api := f.setup(t)
				api.handle("GET /deposit/logs/", serveFixture(t, fx))
				l, err := c.DepositLogs(context.Background(), "Q2uN8x4mZsVb1cLk9eJr7TyW3pHd6fGa")
				if !f.key {
					assert.ErrorIs(t, err, ErrAPIKeyRequired)
					assert.Zero(t, api.count())
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "Q2uN8x4mZsVb1cLk9eJr7TyW3pHd6fGa", api.last().Query.Get("token"))
				assert.Equal(t, "USDT", l.Currency)
				if name == "empty" {
					assert.Empty(t, l.Deposits)
					assert.True(t, l.TotalDeposited.IsZero())
					assert.Empty(t, l.Notifications)
					return
				}
				require.Len(t, l.Deposits, 2)
				assertDec(t, "30", l.TotalDeposited)
				d := l.Deposits[0]
				assert.Equal(t, "trc20_usdt", d.Coin)
				assertDec(t, "25", d.Amount)
				assertDec(t, "25", d.Value)
				assert.Equal(t, []string{"7d9c0b4e2f61a3b58c7e0d12f4a6b8c9e1f203a4b5c6d7e8f9a0b1c2d3e4f5a6"}, d.TxIDs)
				assert.Equal(t, time.Date(2024, 5, 21, 9, 20, 11, 0, time.UTC), d.Timestamp)
				assertDec(t, "5", l.Deposits[1].Amount, "paid_amount as a number")
				assert.Equal(t, []string{"aa", "bb"}, l.Deposits[1].TxIDs, "txid as a list")
				require.Len(t, l.Notifications, 2)
			})
		})
	}
}

func TestHostedLogsValidation(t *testing.T) {
	c, api := setupKey(t)
	for _, id := range []string{"", " ", "a b", "id\n", string(make([]byte, 200))} {
		_, err := c.CheckoutLogs(context.Background(), id)
		assert.ErrorIs(t, err, ErrInvalidOption, "%q", id)
		_, err = c.DepositLogs(context.Background(), id)
		assert.ErrorIs(t, err, ErrInvalidOption, "%q", id)
	}
	assert.Zero(t, api.count())
}

func TestCheckoutLogsPaid(t *testing.T) {
	for state, want := range map[string]bool{
		`"1"`: true, `"true"`: true, `true`: true, `1`: true, `"done"`: true, `"DONE"`: true, `"paid"`: true,
		`"0"`: false, `""`: false, `false`: false, `0`: false, `null`: false, `"pending"`: false, `"expired"`: false,
	} {
		var l CheckoutLogs
		require.NoError(t, jsonUnmarshal(`{"status":"success","is_paid":`+state+`}`, &l), state)
		assert.Equal(t, want, l.Paid(), "%s", state)
		assert.Equal(t, want, l.IsPaid, "%s", state)
	}
}

func TestSplitTxIDs(t *testing.T) {
	assert.Nil(t, SplitTxIDs(""))
	assert.Nil(t, SplitTxIDs(" , ,"))
	assert.Equal(t, []string{"a", "b"}, SplitTxIDs("a, b,"))
	assert.Equal(t, []string{"a"}, SplitTxIDs("a"))
}

func TestNotificationLastUpdateFallback(t *testing.T) {
	var l CheckoutLogs
	require.NoError(t, jsonUnmarshal(`{"status":"success","notifications":[{"last_update":"01/02/2025 03:04:05","response":"fail","next_try":"01/02/2025 03:09:05"}]}`, &l))
	require.Len(t, l.Notifications, 1)
	assert.Equal(t, time.Date(2025, 2, 1, 3, 4, 5, 0, time.UTC), l.Notifications[0].Timestamp)
	assert.Equal(t, "fail", l.Notifications[0].Responses)
	assert.Equal(t, time.Date(2025, 2, 1, 3, 9, 5, 0, time.UTC), l.Notifications[0].NextTry)
	assert.False(t, l.Paid())
}
