package cryptapi

import (
	"encoding/json"
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/google/go-querystring/query"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzCreateURL: for any options, key, base path and request path, the
// URL of a create request carries exactly the parameters go-querystring
// gives for the options, the callback and address, and the key, below the
// base URL.
func FuzzCreateURL(f *testing.F) {
	f.Add("/api/v1", "btc/create/", testKey, benchCallback, btcOut1, "", "", 0, uint8(0))
	f.Add("", "trc20/usdt/create/", "", "https://shop.example/cb?x=%41+b", "0.3@a|0.7@b", "m@shop.example", "fast", 3, uint8(0xff))
	f.Add("/p%20q/", "a b/ü/", "k&=+", "http://[::1]:80/?", "", "é", "a+b", -1, uint8(0x55))
	f.Fuzz(func(t *testing.T, basePath, path, key, callback, address, email, priority string, conf int, flags uint8) {
		opts := []Option{WithBaseURL("https://h.example" + basePath)}
		if key != "" {
			opts = append(opts, WithAPIKey(key))
		}
		c, err := New(opts...)
		if err != nil {
			return // not a client New makes
		}
		o := &CreateOptions{
			Confirmations: conf, Email: email, Priority: priority,
			Pending: flags&1 != 0, Post: flags&2 != 0, JSON: flags&4 != 0, MultiToken: flags&8 != 0,
			MultiChain: flags&16 != 0, Convert: flags&32 != 0,
		}
		u, err := c.buildURL(&request{path: path, opts: o, query: createValues(callback, address)})
		require.NoError(t, err)
		got, err := url.Parse(u.String())
		require.NoError(t, err)
		want, err := query.Values(o)
		require.NoError(t, err)
		want.Set("callback", callback)
		if address != "" {
			want.Set("address", address)
		}
		if c.apiKey != "" {
			want.Set("apikey", c.apiKey)
		}
		assert.Equal(t, want, got.Query())
		assert.True(t, strings.HasPrefix(got.Path, strings.TrimSuffix(c.base.Path, "/")+"/"), "below the base path")
	})
}

// FuzzCallbackURLIsSameAsItself: a callback URL that CallbackURL accepts
// is the same as itself for callbackurl.Same, so a create answer that
// repeats it byte for byte passes the check of CreateAddress.
func FuzzCallbackURLIsSameAsItself(f *testing.F) {
	f.Add(benchCallback, "order_id", "1042")
	f.Add("https://shop.example", "", "")
	f.Add("HTTP://U:P@shop.example:80/a%2Fb/?x=%41&&y", "n", "a b&c")
	f.Add("https://shop.example/cb?tag=a&tag=b&", "tag", "c")
	f.Fuzz(func(t *testing.T, base, k, v string) {
		var params url.Values
		if k != "" {
			params = url.Values{k: {v}}
		}
		cb, err := CallbackURL(base, params)
		if err != nil {
			return
		}
		if !callbackurl.Same(cb, cb) {
			t.Fatalf("CallbackURL accepted %q, which Same does not find equal to itself", cb)
		}
	})
}

// TestMaxResponseBytesAtMaxInt64ReadsTheAnswer: the largest limit
// WithMaxResponseBytes accepts is no limit; the read bound of limit+1
// must not overflow to a negative bound that reads nothing.
func TestMaxResponseBytesAtMaxInt64ReadsTheAnswer(t *testing.T) {
	c, api := setup(t, WithMaxResponseBytes(math.MaxInt64))
	api.handle("GET /btc/create/", serveFixture(t, "create_single.json"))
	addr, err := c.CreateAddress(t.Context(), "btc", &CreateOptions{Callback: benchCallback, Address: "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP"})
	require.NoError(t, err)
	assert.Equal(t, "3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub", addr.AddressIn)
}

// FuzzAddressDecode: any create answer decodes without a panic; a decoded
// Address holds address_out as text and its Outputs as ParseAddressOut
// reads that text, and decoding is deterministic.
func FuzzAddressDecode(f *testing.F) {
	for _, name := range []string{"create_single.json", "create_multi.json", "create_trc20_usdt.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"address_in":null,"address_out":{"a":0.5,"b":"0.5"},"callback_url":7,"ADDRESS_IN":"x","status":"success","x":[1,{"y":null}]}`))
	f.Add([]byte(`{"address_in":"a","address_in":"b","minimum_transaction_coin":"1e-8","priority":true}`))
	f.Add([]byte(`{"address_out":null,"minimum_transaction_coin":null,"status":"error","error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Address
		if err := json.Unmarshal(data, &a); err != nil {
			return
		}
		if outs, err := ParseAddressOut(a.AddressOut); (err == nil) != (a.Outputs != nil) || err == nil && !reflect.DeepEqual(outs, a.Outputs) {
			t.Fatalf("Outputs %v, ParseAddressOut(%q) = %v, %v", a.Outputs, a.AddressOut, outs, err)
		}
		var again Address
		require.NoError(t, json.Unmarshal(data, &again))
		if !reflect.DeepEqual(a, again) {
			t.Fatalf("two decodings differ: %#v\n%#v", a, again)
		}
	})
}
