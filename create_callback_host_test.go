package cryptapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateRefusesCallbackURLOnUnicodeFoldedHost: an answer whose
// callback_url names another host text is refused, also when that host
// differs from the one sent only by a letter that Unicode case folding
// takes for an ASCII one: "ſhop.example" (U+017F, long s) or
// "Key.example" (U+212A, Kelvin sign). Where such a name leads depends
// on the IDNA processing of whoever sends the callbacks (a punycode
// xn--… domain, the ASCII name, or nothing), so the destination cannot be
// checked; strings.EqualFold found the hosts equal and the address was
// handed out.
func TestCreateRefusesCallbackURLOnUnicodeFoldedHost(t *testing.T) {
	const wallet = "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP"
	for _, tc := range []struct{ asked, bound string }{
		{"https://shop.example/cb?nonce=n1", "https://\u017fhop.example/cb?nonce=n1"},
		{"https://shop.example/cb?nonce=n1", "https://%C5%BFhop.example/cb?nonce=n1"},
		{"https://key.example/cb?nonce=n1", "https://\u212Aey.example/cb?nonce=n1"},
		{"https://KEY.example/cb?nonce=n1", "https://\u212Aey.example/cb?nonce=n1"},
	} {
		for _, escaped := range []bool{false, true} {
			c, api := setup(t)
			cb, err := json.Marshal(tc.bound)
			require.NoError(t, err)
			s := string(cb)
			if escaped {
				s = strings.NewReplacer("\u017f", `\u017f`, "\u212A", `\u212a`).Replace(s)
			}
			api.handle("GET /btc/create/", serveJSON(`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":"`+wallet+
				`","callback_url":`+s+`,"priority":"default","status":"success"}`))
			addr, err := c.CreateAddress(t.Context(), "btc", &CreateOptions{Callback: tc.asked, Address: wallet})
			assert.Nil(t, addr, "bound %q, asked %q", tc.bound, tc.asked)
			var dm *DestinationMismatchError
			if assert.True(t, errors.As(err, &dm), "bound %q, asked %q: err %v", tc.bound, tc.asked, err) {
				assert.Equal(t, tc.bound, dm.BoundCallbackURL)
				assert.Contains(t, dm.Error(), "callback_url differs")
			}
		}
	}
}
