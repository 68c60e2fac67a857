package cryptapitest

import (
	"strings"
	"testing"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/shopspring/decimal"
)

// FuzzParseOutputs checks the destination parser: it never panics, what it
// accepts is at most 20 valid addresses whose shares add up to 1, and the
// address_out text it leads to parses back to the same outputs.
func FuzzParseOutputs(f *testing.F) {
	for _, s := range []string{
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		"0.5@bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq|0.5@3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
		"1@bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "0.5@x|0.5@y", "@|@", "1e0@bc1q", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		outs, err := parseOutputs(ChainBitcoin, s)
		if err != nil {
			return
		}
		if len(outs) == 0 || len(outs) > maxOutputs {
			t.Fatalf("%d outputs accepted", len(outs))
		}
		sum := decimal.Zero
		for _, o := range outs {
			if !validAddress(ChainBitcoin, o.addr) || !o.share.IsPositive() {
				t.Fatalf("bad output accepted: %+v", o)
			}
			sum = sum.Add(o.share)
		}
		if !sum.Equal(decimal.NewFromInt(1)) {
			t.Fatalf("shares add up to %s", sum)
		}
		back, err := cryptapi.ParseAddressOut(addressOutText(outs))
		if err != nil || len(back) != len(outs) {
			t.Fatalf("address_out %q does not parse back: %v", addressOutText(outs), err)
		}
		for i := range back {
			if back[i].Address != outs[i].addr || !back[i].Share.Equal(outs[i].share) {
				t.Fatalf("output %d: %+v != %+v", i, back[i], outs[i])
			}
		}
	})
}

// FuzzResolve checks the router: it never panics, and what it routes to a
// ticker operation has a ticker without path tricks.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/btc/create/", "/trc20/usdt/logs/", "/info/", "/btc/payout/request/bulk/", "/../info/", "//", "/pay/x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		o, _, ok := resolve(path)
		if !ok || o.ticker == "" {
			return
		}
		if strings.Contains(o.ticker, "//") || strings.HasPrefix(o.ticker, "/") || strings.HasSuffix(o.ticker, "/") {
			t.Fatalf("ticker %q from %q", o.ticker, path)
		}
	})
}
