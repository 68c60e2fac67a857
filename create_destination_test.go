package cryptapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	ethOut      = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	bech32Out   = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	cashaddrOut = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
	askedCB     = "https://shop.example/pay/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86"
)

// answerCreate answers a create request with address_out and callback_url
// as given (address_out as a JSON string).
func answerCreate(addressOut, callbackURL string) httpmock.Responder {
	b, _ := json.Marshal(map[string]string{
		"address_in": btcIn, "address_out": addressOut, "callback_url": callbackURL,
		"priority": "default", "status": "success",
	})
	return serveJSON(string(b))
}

// swapCase swaps the case of every letter of s.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// TestCreateAddressRefusesAnotherBoundDestination: whatever differs
// between the request and the service's binding (the destination, a
// share, an output, the callback URL's host, path or parameters), the
// address is refused with a *DestinationMismatchError that carries both
// sides, and no address is returned.
func TestCreateAddressRefusesAnotherBoundDestination(t *testing.T) {
	two := []Output{{Address: btcOut1, Share: mustDec("0.7")}, {Address: btcOut2, Share: mustDec("0.3")}}
	cases := []struct {
		name        string
		asked       []Output // nil: Address btcOut1
		askedAddr   string
		addressOut  string
		callbackURL string
		what        string
	}{
		{"another address", nil, "", btcOut2, askedCB, "address_out"},
		{"another address in a map", nil, "", `{"` + btcOut2 + `": 1}`, askedCB, "address_out"},
		{"shares swapped", two, "", `{"` + btcOut1 + `": 0.3, "` + btcOut2 + `": 0.7}`, askedCB, "address_out"},
		{"an output added", nil, "", `{"` + btcOut1 + `": 0.9, "` + btcOut2 + `": 0.1}`, askedCB, "address_out"},
		{"an output missing", two, "", btcOut1, askedCB, "address_out"},
		{"an address twice", two, "", `{"` + btcOut1 + `": 0.7, "` + btcOut1 + `": 0.3}`, askedCB, "address_out"},
		{"base58 in another case", nil, "", swapCase(btcOut1), askedCB, "address_out"},
		{"bech32 in mixed case", nil, bech32Out, strings.ToUpper(bech32Out[:10]) + bech32Out[10:], askedCB, "address_out"},
		{"EVM address differing in a digit", nil, ethOut, ethOut[:41] + "e", askedCB, "address_out"},
		{"a Tron address in another case", nil, "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj", "txlaq63xg1nazckpwkhvzw7csemlmeqcdj", askedCB, "address_out"},
		{"the callback on another host", nil, "", btcOut1, "https://attacker.example/pay/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback on another path", nil, "", btcOut1, "https://shop.example/pay/callback2?order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback with an escaped slash", nil, "", btcOut1, "https://shop.example/pay%2Fcallback?order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback over http", nil, "", btcOut1, "http://shop.example/pay/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback on another port", nil, "", btcOut1, "https://shop.example:8443/pay/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback with another value", nil, "", btcOut1, "https://shop.example/pay/callback?order_id=1002&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback with a parameter more", nil, "", btcOut1, askedCB + "&v=2", "callback_url"},
		{"the callback with a parameter less", nil, "", btcOut1, "https://shop.example/pay/callback?order_id=1001", "callback_url"},
		{"the callback with a value twice", nil, "", btcOut1, askedCB + "&order_id=1001", "callback_url"},
		{"the callback with a key in another case", nil, "", btcOut1, "https://shop.example/pay/callback?Order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback with a fragment", nil, "", btcOut1, askedCB + "#x", "callback_url"},
		{"the callback with credentials", nil, "", btcOut1, "https://u:p@shop.example/pay/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"the callback with a ';' query", nil, "", btcOut1, "https://shop.example/pay/callback?order_id=1001;nonce=3f9c2b7e5d1a4c86", "callback_url"},
		{"no callback", nil, "", btcOut1, "", "callback_url"},
		{"both", nil, "", btcOut2, "https://attacker.example/cb", "address_out differs from the destination asked for and its callback_url"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t)
			// The coin of the address asked for.
			tk := "btc"
			switch {
			case strings.HasPrefix(tc.askedAddr, "0x"):
				tk = "eth"
			case strings.HasPrefix(tc.askedAddr, "T"):
				tk = "trx"
			}
			api.handle("GET /"+tk+"/create/", answerCreate(tc.addressOut, tc.callbackURL))
			o := &CreateOptions{Callback: askedCB, Outputs: tc.asked}
			if tc.asked == nil {
				o.Address = btcOut1
				if tc.askedAddr != "" {
					o.Address = tc.askedAddr
				}
			}
			addr, err := c.CreateAddress(context.Background(), tk, o)
			assert.Nil(t, addr, "no address is returned for use")
			require.ErrorIs(t, err, ErrDestinationMismatch)
			var dm *DestinationMismatchError
			require.ErrorAs(t, err, &dm)
			assert.Equal(t, tk, dm.Ticker)
			assert.Equal(t, askedCB, dm.AskedCallbackURL)
			assert.Equal(t, tc.callbackURL, dm.BoundCallbackURL)
			assert.Equal(t, tc.addressOut, dm.BoundAddressOut)
			require.NotEmpty(t, dm.AskedOutputs)
			if tc.asked == nil {
				assert.Equal(t, o.Address, dm.AskedOutputs[0].Address)
			}
			assert.Contains(t, err.Error(), tc.what)
			assert.NotContains(t, err.Error(), "nonce=", "the message does not hold the callback URL's nonce")
			assert.NotContains(t, err.Error(), "3f9c2b7e5d1a4c86")
		})
	}
}

// TestCreateAddressAcceptsTheSameDestinationWrittenOtherwise: the service
// may write the destination and the callback URL otherwise than they were
// sent; what means the same is accepted.
func TestCreateAddressAcceptsTheSameDestinationWrittenOtherwise(t *testing.T) {
	two := []Output{{Address: btcOut1, Share: mustDec("0.5")}, {Address: bech32Out, Share: mustDec("0.5")}}
	cases := []struct {
		name        string
		asked       []Output // nil: Address askedAddr
		askedAddr   string
		addressOut  string
		callbackURL string
	}{
		{"shares with more digits", two, "", `{"` + btcOut1 + `": 0.50, "` + bech32Out + `": 0.500}`, askedCB},
		{"outputs in another order", two, "", `{"` + bech32Out + `": 0.5, "` + btcOut1 + `": 0.5}`, askedCB},
		{"shares in exponent form", two, "", `{"` + btcOut1 + `": 5e-1, "` + bech32Out + `": "0.5"}`, askedCB},
		{"one output as a map", nil, btcOut1, `{"` + btcOut1 + `": 1.0}`, askedCB},
		{"EVM address in lower case", nil, ethOut, strings.ToLower(ethOut), askedCB},
		{"EVM address in upper case digits", nil, strings.ToLower(ethOut), "0x" + strings.ToUpper(ethOut[2:]), askedCB},
		{"bech32 in upper case", nil, bech32Out, strings.ToUpper(bech32Out), askedCB},
		{"query re-encoded", nil, btcOut1, btcOut1, "https://shop.example/pay/callback?nonce=3f9c2b7e5d1a4c86&%6Frder_id=10%30%31"},
		{"host in upper case with its default port", nil, btcOut1, btcOut1, "HTTPS://SHOP.example:443/pay/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86"},
		{"path with an escaped unreserved character", nil, btcOut1, btcOut1, "https://shop.example/p%61y/callback?order_id=1001&nonce=3f9c2b7e5d1a4c86"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, api := setup(t)
			tk := "btc"
			if strings.HasPrefix(tc.askedAddr, "0x") {
				tk = "eth"
			}
			api.handle("GET /"+tk+"/create/", answerCreate(tc.addressOut, tc.callbackURL))
			o := &CreateOptions{Callback: askedCB, Outputs: tc.asked, Address: tc.askedAddr}
			addr, err := c.CreateAddress(context.Background(), tk, o)
			require.NoError(t, err)
			assert.Equal(t, btcIn, addr.AddressIn)
			assert.Equal(t, tc.callbackURL, addr.CallbackURL, "the callback URL as stored, the key for Logs")
		})
	}
}

// TestCreateAddressChecksQueryValuesInOrder: a parameter given twice is
// the same only with its values in the same order.
func TestCreateAddressChecksQueryValuesInOrder(t *testing.T) {
	c, api := setup(t)
	cb := "https://shop.example/cb?tag=a&tag=b"
	api.handle("GET /btc/create/", answerCreate(btcOut1, "https://shop.example/cb?tag=b&tag=a"))
	_, err := c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: cb, Address: btcOut1})
	assert.ErrorIs(t, err, ErrDestinationMismatch)
	api.handle("GET /btc/create/", answerCreate(btcOut1, "https://shop.example/cb?tag=a&x=&tag=b"))
	_, err = c.CreateAddress(context.Background(), "btc", &CreateOptions{Callback: cb, Address: btcOut1})
	assert.ErrorIs(t, err, ErrDestinationMismatch)
}

func TestSameAddress(t *testing.T) {
	same := []struct{ ticker, a, b string }{
		{"btc", btcOut1, btcOut1}, {"eth", ethOut, strings.ToLower(ethOut)}, {"bep20_usdt", ethOut, ethOut[:2] + strings.ToUpper(ethOut[2:])},
		{"btc", bech32Out, strings.ToUpper(bech32Out)}, {"bch", cashaddrOut, strings.ToUpper(cashaddrOut)},
		{"ltc", "ltc1q7pd572drwasgt54080ff2gka7xcvpwtdq8us64", "LTC1Q7PD572DRWASGT54080FF2GKA7XCVPWTDQ8US64"},
	}
	for _, p := range same {
		assert.True(t, sameAddress(p.ticker, p.a, p.b), "%s %s", p.a, p.b)
		assert.True(t, sameAddress(p.ticker, p.b, p.a), "%s %s", p.b, p.a)
	}
	differ := []struct{ ticker, a, b string }{
		{"btc", "", ""}, {"btc", btcOut1, swapCase(btcOut1)}, {"btc", btcOut1, strings.ToLower(btcOut1)},
		{"btc", bech32Out, "BC1Q" + bech32Out[4:]}, // mixed case is invalid bech32
		{"eth", "0x" + strings.Repeat("a", 39), "0x" + strings.Repeat("A", 39)},
		{"eth", "0X5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ethOut},
		{"btc", "bc1qb", "BC1QB!"}, {"btc", "bc1q0O", "BC1Q0O"},
		// Only a coin's own bech32 addresses ignore case: on another coin
		// the same letters could be a case-sensitive base58 address.
		{"ltc", bech32Out, strings.ToUpper(bech32Out)}, {"sol", bech32Out, strings.ToUpper(bech32Out)},
		{"btc", cashaddrOut, strings.ToUpper(cashaddrOut)},
	}
	for _, p := range differ {
		assert.False(t, sameAddress(p.ticker, p.a, p.b), "%s %q %q", p.ticker, p.a, p.b)
	}
	assert.False(t, sameOutputs("btc", nil, nil), "no destination is not a destination")
	assert.True(t, sameOutputs("btc", []Output{{btcOut1, decimal.NewFromInt(1)}}, []Output{{btcOut1, mustDec("1.000")}}))
}

// TestNewNonce: 128 bits as 32 hex digits, different each time, usable
// as a callback URL parameter as it is.
func TestNewNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := NewNonce()
		require.Regexp(t, `^[0-9a-f]{32}$`, n)
		require.False(t, seen[n], "nonce repeated")
		seen[n] = true
	}
	cb, err := CallbackURL("https://shop.example/cb", map[string][]string{"nonce": {NewNonce()}})
	require.NoError(t, err)
	assert.Regexp(t, `^https://shop\.example/cb\?nonce=[0-9a-f]{32}$`, cb)
}
