package cryptapi

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateAddressRefusesAUnicodeLookAlikeOfACaseFreeDestination: a bound
// address_out that is the asked bech32 or cashaddr address in upper case
// with one letter replaced by a Unicode character whose case folding is
// that letter (the Kelvin sign U+212A folds to "k") is another text, not
// the asked address written in the other case, and is refused.
func TestCreateAddressRefusesAUnicodeLookAlikeOfACaseFreeDestination(t *testing.T) {
	const kelvin = "\u212a"
	cases := []struct{ ticker, asked string }{
		{"btc", "bc1q56mj3gna7kq0057de42ww2rjxwzeh9amkncq5e"},
		{"ltc", "ltc1q56mj3gna7kq0057de42ww2rjxwzeh9amj0zyvf"},
		{"bch", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"},
	}
	for _, tc := range cases {
		t.Run(tc.ticker, func(t *testing.T) {
			lookAlike := strings.Replace(strings.ToUpper(tc.asked), "K", kelvin, 1)
			require.NotEqual(t, strings.ToUpper(tc.asked), lookAlike)
			require.True(t, strings.EqualFold(tc.asked, lookAlike), "the look-alike folds to the asked address")

			c, api := setup(t)
			api.handle("GET /"+tc.ticker+"/create/", answerCreate(lookAlike, askedCB))
			addr, err := c.CreateAddress(context.Background(), tc.ticker, &CreateOptions{Callback: askedCB, Address: tc.asked})
			assert.Nil(t, addr, "no address is returned for use")
			require.ErrorIs(t, err, ErrDestinationMismatch)
			var dm *DestinationMismatchError
			require.ErrorAs(t, err, &dm)
			assert.Equal(t, lookAlike, dm.BoundAddressOut)

			// The same address in upper case is still the same destination.
			c, api = setup(t)
			api.handle("GET /"+tc.ticker+"/create/", answerCreate(strings.ToUpper(tc.asked), askedCB))
			addr, err = c.CreateAddress(context.Background(), tc.ticker, &CreateOptions{Callback: askedCB, Address: tc.asked})
			require.NoError(t, err)
			assert.Equal(t, strings.ToUpper(tc.asked), addr.AddressOut)
		})
	}
}

// FuzzSameAddressDiffersAtMostInASCIICase: two addresses taken for the same
// destination are the same text, or the same ASCII text in another case.
func FuzzSameAddressDiffersAtMostInASCIICase(f *testing.F) {
	for _, s := range [][3]string{
		{"btc", bech32Out, strings.ToUpper(bech32Out)},
		{"btc", "bc1qk", "BC1Q\u212a"},
		{"eth", ethOut, strings.ToLower(ethOut)},
		{"bch", cashaddrOut, strings.ToUpper(cashaddrOut)},
		{"ltc", "ltc1qs", "LTC1Q\u017f"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ticker, a, b string) {
		if !sameAddress(ticker, a, b) || a == b {
			return
		}
		for _, s := range []string{a, b} {
			for i := 0; i < len(s); i++ {
				if s[i] >= 0x80 {
					t.Fatalf("%q and %q taken for one %s address", a, b, ticker)
				}
			}
		}
		// ASCII only from here, so EqualFold folds ASCII letters alone.
		if !strings.EqualFold(a, b) {
			t.Fatalf("%q and %q taken for one %s address", a, b, ticker)
		}
	})
}
