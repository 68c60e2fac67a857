package cryptapi_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/address"
)

// paymentService is a small service for RequestPayment: BTC with a minimum
// of 0.0008, priced at 50000 USD, counting the requests per operation.
type paymentService struct {
	mu        sync.Mutex
	counts    map[string]int
	minimum   string
	units     string // minimum_transaction in smallest units
	addrMin   string // minimum_transaction_coin in the create answer
	infoFail  bool
	convFail  bool
	lastQuery map[string]url.Values
}

func (s *paymentService) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[op]
}

func (s *paymentService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/api")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	op := parts[len(parts)-1]
	s.mu.Lock()
	s.counts[op]++
	s.lastQuery[op] = r.URL.Query()
	infoFail, convFail, minimum, units, addrMin := s.infoFail, s.convFail, s.minimum, s.units, s.addrMin
	s.mu.Unlock()
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	switch op {
	case "info":
		if infoFail {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":"error","error":"Error fetching info"}`)
			return
		}
		fmt.Fprintf(w, `{"coin":"Bitcoin","minimum_transaction":%s,"minimum_transaction_coin":"%s","minimum_fee":"546","minimum_fee_coin":"0.00000546","fee_percent":"1.000","network_fee_estimation":"0.00002","status":"success","prices":{},"prices_updated":null}`, units, minimum)
	case "convert":
		if convFail {
			fmt.Fprint(w, `{"status":"error","error":"Unsupported currency"}`)
			return
		}
		v, _ := decimal.NewFromString(q.Get("value"))
		coin := v.Div(decimal.NewFromInt(50000))
		fmt.Fprintf(w, `{"value_coin":"%s","exchange_rate":"0.00002","status":"success"}`, coin.StringFixed(8))
	case "create":
		fmt.Fprintf(w, `{"address_in":"bc1qgdgn5fvkc9w65tlx2tcdn4f2ytfml7t05g2ren","address_out":%q,"callback_url":%q,"priority":"default","minimum_transaction_coin":%q,"status":"success"}`, q.Get("address"), q.Get("callback"), addrMin)
	case "qrcode":
		fmt.Fprintf(w, `{"status":"success","qr_code":"iVBORw0KGgo=","payment_uri":"bitcoin:%s?amount=%s"}`, q.Get("address"), q.Get("value"))
	default:
		http.NotFound(w, r)
	}
}

func newPaymentService(t *testing.T, opts ...cryptapi.Option) (*paymentService, *cryptapi.Client) {
	t.Helper()
	s := &paymentService{counts: map[string]int{}, lastQuery: map[string]url.Values{}, minimum: "0.0008", units: "80000"}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := cryptapi.New(append([]cryptapi.Option{cryptapi.WithBaseURL(srv.URL + "/api"), cryptapi.WithRetry(1, 0, 0)}, opts...)...)
	require.NoError(t, err)
	return s, c
}

func btcRequest(amount string, currency string) *cryptapi.PaymentRequestOptions {
	return &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{
			Callback: "https://shop.example/cb",
			Params:   url.Values{"order": {"42"}},
			Address:  "bc1qcr35skgnyyel4tlfxwz3u7q38a5rm48mujj88l",
		},
		Amount:   decimal.RequireFromString(amount),
		Currency: currency,
	}
}

func TestRequestPaymentCoinAmount(t *testing.T) {
	s, c := newPaymentService(t)
	pr, err := c.RequestPayment(context.Background(), "BTC", btcRequest("0.001", ""))
	require.NoError(t, err)
	assert.Equal(t, "btc", pr.Ticker)
	assert.True(t, pr.AmountCoin.Equal(decimal.RequireFromString("0.001")))
	assert.True(t, pr.ExchangeRate.Equal(decimal.NewFromInt(1)))
	assert.True(t, pr.Minimum.Equal(decimal.RequireFromString("0.0008")))
	assert.Equal(t, "bc1qgdgn5fvkc9w65tlx2tcdn4f2ytfml7t05g2ren", pr.Address.AddressIn)
	assert.Equal(t, "bitcoin:bc1qgdgn5fvkc9w65tlx2tcdn4f2ytfml7t05g2ren?amount=0.001", pr.PaymentURI)
	assert.Nil(t, pr.QRCode, "no QR code unless asked for")
	assert.Equal(t, 0, s.count("convert"), "a coin amount needs no conversion")
	assert.Equal(t, "0", s.lastQuery["info"].Get("prices"), "the minimum needs no prices")
	assert.Equal(t, "https://shop.example/cb?order=42", s.lastQuery["create"].Get("callback"))
}

func TestRequestPaymentFiatAmount(t *testing.T) {
	s, c := newPaymentService(t)
	o := btcRequest("100", "USD")
	o.QRCode = true
	pr, err := c.RequestPayment(context.Background(), "btc", o)
	require.NoError(t, err)
	assert.Equal(t, 1, s.count("convert"))
	assert.Equal(t, "USD", s.lastQuery["convert"].Get("from"))
	assert.True(t, pr.AmountCoin.Equal(decimal.RequireFromString("0.002")), pr.AmountCoin.String())
	assert.True(t, pr.ExchangeRate.Equal(decimal.RequireFromString("0.00002")))
	assert.Equal(t, "USD", pr.Currency)
	require.NotNil(t, pr.QRCode)
	assert.Equal(t, "0.002", s.lastQuery["qrcode"].Get("value"), "the QR code carries the exact coin amount")
}

func TestRequestPaymentMinimumBoundary(t *testing.T) {
	tests := []struct {
		name    string
		amount  string
		outputs int
		wantErr bool
		wantMin string
	}{
		{"exactly at minimum", "0.0008", 1, false, "0.0008"},
		{"one unit below", "0.00079999", 1, true, "0.0008"},
		{"two outputs need 4/3 of it, rounded up to whole satoshis", "0.00106666", 2, true, "0.00106667"},
		{"two outputs at the rounded-up minimum", "0.00106667", 2, false, "0.00106667"},
		{"finer than a satoshi is rounded up, not down", "0.001066661", 2, false, "0.00106667"},
		{"four outputs need twice it", "0.0016", 4, false, "0.0016"},
		{"four outputs, one unit below", "0.00159999", 4, true, "0.0016"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newPaymentService(t)
			o := btcRequest(tt.amount, "")
			if tt.outputs > 1 {
				o.Address = ""
				share := decimal.NewFromInt(1).Div(decimal.NewFromInt(int64(tt.outputs)))
				for i := 0; i < tt.outputs; i++ {
					o.Outputs = append(o.Outputs, cryptapi.Output{Address: testAddress(i), Share: share})
				}
			}
			pr, err := c.RequestPayment(context.Background(), "btc", o)
			if tt.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, cryptapi.ErrBelowMinimum)
				var bm *cryptapi.BelowMinimumError
				require.ErrorAs(t, err, &bm)
				assert.True(t, bm.Minimum.Equal(decimal.RequireFromString(tt.wantMin)), bm.Minimum.String())
				assert.True(t, bm.Amount.Equal(decimal.RequireFromString(tt.amount)))
				assert.Equal(t, 0, s.count("create"), "no address is created for an amount below the minimum")
				return
			}
			require.NoError(t, err)
			assert.True(t, pr.Minimum.Equal(decimal.RequireFromString(tt.wantMin)), pr.Minimum.String())
			assert.Equal(t, 1, s.count("create"))
		})
	}
}

func TestEffectiveMinimum(t *testing.T) {
	m := decimal.RequireFromString("3")
	for n, want := range map[int]string{0: "3", 1: "3", 2: "4", 3: "5", 4: "6", 20: "22"} {
		assert.Equal(t, want, cryptapi.EffectiveMinimum(m, n).String(), "n=%d", n)
	}
	// Not divisible by 3: rounded up, never down.
	got := cryptapi.EffectiveMinimum(decimal.RequireFromString("0.0001"), 2)
	assert.True(t, got.Mul(decimal.NewFromInt(3)).GreaterThanOrEqual(decimal.RequireFromString("0.0004")))
}

func TestRequestPaymentInfoCache(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, c := newPaymentService(t, cryptapi.WithClock(cryptapi.ClockFunc(clock)), cryptapi.WithInfoCacheTTL(time.Minute))
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		o := btcRequest("0.001", "")
		o.Callback = fmt.Sprintf("https://shop.example/cb/%d", i)
		_, err := c.RequestPayment(ctx, "btc", o)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, s.count("info"), "five requests within the TTL read info once")
	assert.Equal(t, 5, s.count("create"))

	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	_, err := c.RequestPayment(ctx, "btc", btcRequest("0.001", ""))
	require.NoError(t, err)
	assert.Equal(t, 2, s.count("info"), "an expired entry is read again")

	// The new minimum is honoured once the cache has expired.
	s.mu.Lock()
	s.minimum = "0.01"
	s.mu.Unlock()
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	_, err = c.RequestPayment(ctx, "btc", btcRequest("0.001", ""))
	assert.ErrorIs(t, err, cryptapi.ErrBelowMinimum)
}

func TestRequestPaymentNoCache(t *testing.T) {
	s, c := newPaymentService(t, cryptapi.WithInfoCacheTTL(0))
	for i := 0; i < 3; i++ {
		_, err := c.RequestPayment(context.Background(), "btc", btcRequest("0.001", ""))
		require.NoError(t, err)
	}
	assert.Equal(t, 3, s.count("info"))
}

func TestRequestPaymentSurfacesServiceErrors(t *testing.T) {
	t.Run("convert", func(t *testing.T) {
		s, c := newPaymentService(t)
		s.convFail = true
		_, err := c.RequestPayment(context.Background(), "btc", btcRequest("100", "XYZ"))
		var apiErr *cryptapi.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "Unsupported currency", apiErr.Message)
		assert.Equal(t, 0, s.count("info"))
		assert.Equal(t, 0, s.count("create"))
	})
	t.Run("info", func(t *testing.T) {
		s, c := newPaymentService(t)
		s.infoFail = true
		_, err := c.RequestPayment(context.Background(), "btc", btcRequest("0.001", ""))
		var apiErr *cryptapi.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
		assert.Equal(t, "Error fetching info", apiErr.Message)
		assert.Equal(t, 0, s.count("create"))
	})
}

func TestRequestPaymentValidatesFirst(t *testing.T) {
	tests := []struct {
		name string
		mod  func(o *cryptapi.PaymentRequestOptions)
		want error
	}{
		{"zero amount", func(o *cryptapi.PaymentRequestOptions) { o.Amount = decimal.Zero }, cryptapi.ErrInvalidValue},
		{"negative amount", func(o *cryptapi.PaymentRequestOptions) { o.Amount = decimal.NewFromInt(-1) }, cryptapi.ErrInvalidValue},
		{"no callback", func(o *cryptapi.PaymentRequestOptions) { o.Callback = "" }, cryptapi.ErrCallbackRequired},
		{"no destination keyless", func(o *cryptapi.PaymentRequestOptions) { o.Address = "" }, cryptapi.ErrAddressRequired},
		{"bad currency", func(o *cryptapi.PaymentRequestOptions) { o.Currency = "US D" }, cryptapi.ErrInvalidOption},
		{"bad QR size", func(o *cryptapi.PaymentRequestOptions) { o.QRSize = 10 }, cryptapi.ErrInvalidQRSize},
		{"negative confirmations", func(o *cryptapi.PaymentRequestOptions) { o.Confirmations = -1 }, cryptapi.ErrInvalidConfirmations},
		{"shares not adding to 1", func(o *cryptapi.PaymentRequestOptions) {
			o.Address = ""
			o.Outputs = []cryptapi.Output{{Address: "a1", Share: decimal.RequireFromString("0.5")}, {Address: "a2", Share: decimal.RequireFromString("0.4")}}
		}, cryptapi.ErrInvalidOutputs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newPaymentService(t)
			o := btcRequest("100", "USD")
			tt.mod(o)
			_, err := c.RequestPayment(context.Background(), "btc", o)
			assert.ErrorIs(t, err, tt.want)
			s.mu.Lock()
			total := 0
			for _, n := range s.counts {
				total += n
			}
			s.mu.Unlock()
			assert.Zero(t, total, "no request reaches the service")
		})
	}
	_, c := newPaymentService(t)
	_, err := c.RequestPayment(context.Background(), "../btc", btcRequest("1", ""))
	assert.True(t, errors.Is(err, cryptapi.ErrInvalidTicker))
}

func TestRequestPaymentRefusesUnknownMinimum(t *testing.T) {
	for _, m := range []string{"", "0", "null"} {
		s, c := newPaymentService(t)
		s.minimum = m
		_, err := c.RequestPayment(context.Background(), "btc", btcRequest("0.001", ""))
		assert.ErrorIs(t, err, cryptapi.ErrMinimumUnknown, "minimum %q", m)
		assert.Equal(t, 0, s.count("create"), "no address without a known minimum")
	}
}

func TestRequestPaymentWithoutPrecisionDoesNotRound(t *testing.T) {
	s, c := newPaymentService(t)
	s.units = "null" // the service left minimum_transaction out: precision unknown
	pr, err := c.RequestPayment(context.Background(), "btc", btcRequest("0.001000001", ""))
	require.NoError(t, err)
	assert.Equal(t, "0.001000001", pr.AmountCoin.String())
}

func TestRequestPaymentChecksTheAddressMinimum(t *testing.T) {
	s, c := newPaymentService(t)
	s.addrMin = "0.002" // the create answer states a higher minimum
	_, err := c.RequestPayment(context.Background(), "btc", btcRequest("0.001", ""))
	var below *cryptapi.BelowMinimumError
	require.ErrorAs(t, err, &below)
	assert.Equal(t, "0.002", below.Minimum.String())
	assert.Equal(t, 0, s.count("qrcode"), "no payment URI for an amount below the minimum")
}

// testAddress returns a valid, distinct Bitcoin address for each n (a
// P2WPKH address of a hash of n; nobody holds its key).
func testAddress(n int) string {
	h := sha256.Sum256([]byte(fmt.Sprint("cryptapi-go test address ", n)))
	return address.Segwit("bc", 0, h[:20])
}
