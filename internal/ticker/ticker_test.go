package ticker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	cases := []struct{ in, path, key string }{
		{"btc", "btc", "btc"},
		{"BTC", "btc", "btc"},
		{"trc20_usdt", "trc20/usdt", "trc20_usdt"},
		{"trc20/usdt", "trc20/usdt", "trc20_usdt"},
		{"TRC20/USDT", "trc20/usdt", "trc20_usdt"},
		{"avax-c", "avax-c", "avax-c"},
		{"polygon_usdc.e", "polygon/usdc.e", "polygon_usdc.e"},
		{"bep20/1inch", "bep20/1inch", "bep20_1inch"},
		{strings.Repeat("a", 32), strings.Repeat("a", 32), strings.Repeat("a", 32)},
	}
	for _, tc := range cases {
		tk, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.path, tk.Path(), tc.in)
		assert.Equal(t, tc.key, tk.Key(), tc.in)
		assert.Equal(t, tc.key, tk.String(), tc.in)
	}
	tk, err := Parse("trc20_usdt")
	require.NoError(t, err)
	assert.Equal(t, Ticker{Network: "trc20", Coin: "usdt"}, tk)
}

func TestParseRefuses(t *testing.T) {
	bad := []string{
		"", "..", ".", "/", "_", "../info", "btc/..", "/btc", "btc/", "_btc", "btc_", "trc20//usdt", "trc20__usdt",
		"a/b/c", "a_b_c", "a_b/c", "b tc", "btc ", "\tbtc", "btc?x", "btc#x", "btc%2f", "%2e%2e", "btc\x00", "btc\n",
		"btc\\x", "usdc..e", ".btc", "btc.", "-btc", "btc-", "a.-b", "a-.b", "btc;", "btc&x=1", "btc=1", "a+b", "a@b",
		"\u212Aas", "\u0130", "btc\u00a0", "bt\u0441", strings.Repeat("a", 33), "trc20/" + strings.Repeat("b", 33),
	}
	for _, in := range bad {
		tk, err := Parse(in)
		assert.ErrorIs(t, err, ErrInvalid, "%q", in)
		assert.Equal(t, Ticker{}, tk, "%q", in)
	}
}

// FuzzTickerParse: a valid result is safe in a URL path and matches what
// the user wrote; nothing panics.
func FuzzTickerParse(f *testing.F) {
	for _, s := range []string{
		"btc", "trc20_usdt", "trc20/usdt", "avax-c", "polygon_usdc.e", "..", "../x", "a/b/c", "%2e%2e", "\u212Aas",
		"BTC", "a.b-c", "a/", "/a", "a_", "a..b", strings.Repeat("z", 33),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tk, err := Parse(s)
		if err != nil {
			if tk != (Ticker{}) {
				t.Fatalf("error with a non-zero ticker for %q", s)
			}
			return
		}
		p := tk.Path()
		if p == "" || strings.Contains(p, "..") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			t.Fatalf("unsafe path %q from %q", p, s)
		}
		if strings.Count(p, "/") > 1 {
			t.Fatalf("path %q has more than two segments", p)
		}
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '/' || c == '-') {
				t.Fatalf("path %q from %q has %q", p, s, c)
			}
		}
		if k := tk.Key(); strings.ContainsAny(k, "/") || strings.Count(k, "_") > 1 {
			t.Fatalf("bad key %q", k)
		}
		// The result is the input, lower-cased, in one of its two spellings.
		if low := strings.ToLower(s); low != p && low != tk.Key() {
			t.Fatalf("%q parsed to %q / %q", s, p, tk.Key())
		}
		// Parsing either spelling again gives the same ticker.
		for _, again := range []string{p, tk.Key()} {
			tk2, err := Parse(again)
			if err != nil || tk2 != tk {
				t.Fatalf("%q does not parse back to %+v", again, tk)
			}
		}
	})
}
