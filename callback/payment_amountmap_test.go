package callback

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every field is checked when the callback is parsed: a signed callback
// with a malformed amount map is refused with 400 before the merchant's
// function runs, in every shape, whichever parser would find the fault.
func TestMalformedAmountMapRefusedBeforeTheHandlerRuns(t *testing.T) {
	a, _ := testKeys(t)
	v := newTestVerifier(t)
	confirmed := minimalForm + "&pending=0&value_coin=3.2"
	twice := url.QueryEscape(`{"USD":"3.20"}`)
	for _, tt := range []struct {
		name, field string
		text        string // the field's text; "" for a field given twice
	}{
		{"not JSON", "value_coin_convert", `USD:3.20`},
		{"not an amount", "value_coin_convert", `{"USD":"x"}`},
		{"exponent out of range", "value_forwarded_coin_convert", `{"USD":"1e999999"}`},
		{"an array of amounts", "value_forwarded_coin_convert", `["3.20"]`},
		{"unterminated", "value_coin_convert", `{"USD":"3.20"`},
		{"trailing data", "value_coin_convert", `{"USD":"3.20"} x`},
		{"nested", "value_coin_convert", `{"USD":{"v":"3.20"}}`},
		{"huge number", "value_coin_convert", `{"USD":` + strings.Repeat("9", 200) + `}`},
		{"a flag for an amount", "value_coin_convert", `{"USD":true}`},
		{"escaped exponent out of range", "value_coin_convert", `{"USD":"1\u0065999999"}`},
		{"given twice", "value_coin_convert", ""},
	} {
		form := confirmed + "&" + tt.field + "=" + url.QueryEscape(tt.text)
		if tt.text == "" {
			form = confirmed + "&" + tt.field + "=" + twice + "&" + tt.field + "=" + twice
		}
		reqs := map[string]func() *http.Request{
			"GET":       func() *http.Request { return signedGET(t, a, "/callback?order_id=1&"+form) },
			"POST form": func() *http.Request { return signedPOST(t, a, "/callback?order_id=1", formType, form) },
		}
		if tt.text != "" {
			jsonBody := `{"uuid":"u","address_in":"a","address_out":"o","txid_in":"t","coin":"btc","price":"1","pending":0,` +
				`"value_coin":"3.2","` + tt.field + `":` + jsonString(tt.text) + `}`
			reqs["POST JSON"] = func() *http.Request { return signedPOST(t, a, "/callback", "application/json", jsonBody) }
		}
		for shape, req := range reqs {
			t.Run(tt.name+" "+shape, func(t *testing.T) {
				var calls int
				h := newTestHandler(t, v, func(context.Context, *Payment) error {
					calls++
					return nil
				})
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req())
				assert.Equal(t, http.StatusBadRequest, w.Code)
				assert.Zero(t, calls, "the merchant's function ran for a malformed callback")

				_, err := v.Payment(req())
				require.ErrorIs(t, err, ErrMalformed)
				assert.Contains(t, err.Error(), "field "+tt.field+":")
			})
		}
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
