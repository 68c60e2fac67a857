package cryptapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateAnswerDecodesAsEncodingJSONThroughTheClient serves crafted
// create answers through a real server and checks that CreateAddress
// gives what encoding/json alone gives for them (the address, or an
// error): repeated keys, keys differing only in case (encoding/json
// matches them, with Unicode folding), escaped keys and values, a byte
// order mark, trailing data, null, numbers against strings, huge and
// exact decimals, and deep unknown values.
func TestCreateAnswerDecodesAsEncodingJSONThroughTheClient(t *testing.T) {
	cbq, err := json.Marshal(benchCallback)
	require.NoError(t, err)
	cb := string(cbq)
	out := `"` + btcOut1 + `"`
	base := `"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":` + out + `,"callback_url":` + cb
	deep := strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40)
	bodies := []string{
		`{` + base + `,"status":"success"}`,
		`{` + base + `,"address_in":"B"}`,
		`{` + base + `,"ADDRESS_IN":"B"}`,
		`{"ADDRESS_IN":"B",` + base + `}`,
		`{` + base + `,"Callback_URL":"https://evil.example/cb"}`,
		`{` + base + `,"callback_url":"https://evil.example/cb"}`,
		`{` + base + `,"Address_Out":"bc1ql7hh7r5x7trdtsvkc4cgmcm2wgs0h2ay3nw49n"}`,
		`{` + base + `,"STATUS":"error","error":"x"}`,
		`{` + base + `,"\u017ftatus":"error","error":"x"}`,
		`{` + base + `,"statu\u0073":"error","error":"x"}`,
		`{` + base + `,"address\u005fin":"B"}`,
		`{` + base + `,"callback\u005Furl":"https://evil.example/cb"}`,
		`{` + base + `,"c\u0061llback_url":` + cb + `}`,
		"\ufeff{" + base + `}`,
		`{` + base + `} x`,
		`{` + base + `}{}`,
		`{` + base + `,}`,
		`{` + base + `,"status":"success"` + "\n\t\r }\n",
		`{` + base + `,"minimum_transaction_coin":1e400}`,
		`{` + base + `,"minimum_transaction_coin":123456789012345678901234567890.123456789}`,
		`{` + base + `,"minimum_transaction_coin":"0E-8"}`,
		`{` + base + `,"minimum_transaction_coin":-0}`,
		`{` + base + `,"minimum_transaction_coin":"1e-8"}`,
		`{` + base + `,"minimum_transaction_coin":null}`,
		`{` + base + `,"minimum_transaction_coin":""}`,
		`{` + base + `,"minimum_transaction_coin":01}`,
		`{` + base + `,"minimum_transaction_coin":1.}`,
		`{` + base + `,"minimum_transaction_coin":true}`,
		`{` + base + `,"priority":7}`,
		`{` + base + `,"priority":null}`,
		`{` + base + `,"priority":"a\u0000b"}`,
		`{` + base + `,"priority":"` + "\x7f" + `"}`,
		`{` + base + `,"x":` + deep + `}`,
		`{` + base + `,"x":{"address_in":"B","status":"error"}}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":null,"callback_url":` + cb + `}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":{"` + btcOut1 + `":1},"callback_url":` + cb + `}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":"1@` + btcOut1 + `","callback_url":` + cb + `}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":` + out + `,"callback_url":"` + strings.ReplaceAll(benchCallback, "/", `\/`) + `"}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":` + out + `,"callback_url":"` + strings.Replace(benchCallback, "shop", `sho\u0070`, 1) + `"}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":` + out + `,"callback_url":"` + strings.Replace(benchCallback, "shop", `SHOP`, 1) + `"}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":` + out + `,"callback_url":"` + strings.Replace(benchCallback, "k", `\u212a`, 1) + `"}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":"` + strings.ToLower(btcOut1) + `","callback_url":` + cb + `}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":"` + btcOut1 + `\u0000","callback_url":` + cb + `}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":"` + btcOut1 + ` ","callback_url":` + cb + `}`,
		`{"address_in":"3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub","address_out":` + out + `,"callback_url":` + cb + `,"callback_url":` + cb + `}`,
		`null`, `[]`, `{}`, `"x"`, ``, ` `, `{"status":"success"}`,
		`{` + base + `}` + "\u00a0",
		"\u00a0{" + base + `}`,
	}
	c, api := setup(t)
	for i, body := range bodies {
		api.handle("GET /btc/create/", serveBody(http.StatusOK, "application/json", []byte(body)))
		got, gotErr := c.CreateAddress(t.Context(), "btc", &CreateOptions{Callback: benchCallback, Address: btcOut1})
		want, wantErr := plainCreateOutcome(bytes.TrimSpace([]byte(body)), benchCallback, btcOut1)
		what := fmt.Sprintf("answer %d: %q", i, body)
		if wantErr != nil {
			assert.Error(t, gotErr, what)
			assert.Nil(t, got, what)
			continue
		}
		if assert.NoError(t, gotErr, what) {
			assert.Equal(t, want, *got, what)
		}
	}
}

// plainCreateOutcome is what CreateAddress makes of a trimmed answer body
// with encoding/json alone: the address, or that it fails.
func plainCreateOutcome(b []byte, callback, address string) (Address, error) {
	if len(b) == 0 || b[0] != '{' {
		return Address{}, fmt.Errorf("not an object")
	}
	var a Address
	if err := json.Unmarshal(b, &a); err != nil {
		return Address{}, err
	}
	if strings.EqualFold(a.Status, "error") {
		return Address{}, fmt.Errorf("status error")
	}
	if err := checkBinding("btc", callback, &CreateOptions{Callback: callback, Address: address}, &a); err != nil {
		return Address{}, err
	}
	return a, nil
}
