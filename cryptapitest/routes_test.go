package cryptapitest_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// route is one operation of the fake, called as the service's own client
// libraries call it, with what the service answers: the HTTP status, the
// "status" field ("" where the service sends none) and the fields the
// libraries read.
type route struct {
	op     string // the name the fake's router gives the operation
	method string
	path   string // with the query; "{x}" is replaced from earlier answers
	form   url.Values
	json   string
	code   int
	status string
	fields []string
	save   map[string]string // field of the answer -> name of a later "{name}"
}

// routes lists every operation the fake serves. The libraries test the
// answer's "status": php-blockbee 2.1.1 reads the payout wallet's address
// only when status is "success" (get_payout_wallet), and its logs and QR
// code likewise (check_logs, get_qrcode); the Ruby library requires
// "success" from every POST; every library raises on "error".
var routes = []route{
	{op: "create", method: "GET", path: "/btc/create/?apikey=k&callback={merchant}&address=" + btcDest + "&pending=1",
		code: 200, status: "success", fields: []string{"address_in", "address_out", "callback_url", "priority", "minimum_transaction_coin"},
		save: map[string]string{"address_in": "address_in"}},
	{op: "logs", method: "GET", path: "/btc/logs/?apikey=k&callback={merchant}",
		code: 200, status: "success", fields: []string{"address_in", "callback_url", "callbacks"}},
	{op: "info", method: "GET", path: "/btc/info/?apikey=k",
		code: 200, status: "success", fields: []string{"coin", "minimum_transaction_coin", "prices"}},
	// The all-coins answer is an object keyed by ticker (and fee_tiers)
	// with no status: the libraries turn every key but fee_tiers into a
	// coin, so a "status" key would be read as a coin.
	{op: "allinfo", method: "GET", path: "/info/?prices=0",
		code: 200, status: "", fields: []string{"btc", "trc20", "fee_tiers"}},
	{op: "qrcode", method: "GET", path: "/btc/qrcode/?apikey=k&address={address_in}&value=0.01&size=256",
		code: 200, status: "success", fields: []string{"qr_code", "payment_uri"}},
	{op: "convert", method: "GET", path: "/btc/convert/?value=30&from=USD",
		code: 200, status: "success", fields: []string{"value_coin", "exchange_rate"}},
	{op: "convertfree", method: "GET", path: "/convert/?from=EUR&to=trc20_usdt&value=25",
		code: 200, status: "success", fields: []string{"value_coin", "exchange_rate"}},
	{op: "estimate", method: "GET", path: "/btc/estimate/?addresses=2&priority=default",
		code: 200, status: "success", fields: []string{"estimated_cost", "estimated_cost_currency"}},
	{op: "pubkey", method: "GET", path: "/pubkey/",
		code: 200, status: "success", fields: []string{"pubkey"}},
	{op: "checkout", method: "GET", path: "/checkout/request/?apikey=k&redirect_url=https%3A%2F%2Fshop.example%2Fthanks&notify_url={merchant}&value=20",
		code: 200, status: "success", fields: []string{"payment_url", "payment_id", "success_token"},
		save: map[string]string{"payment_id": "checkout_id"}},
	{op: "checkoutlogs", method: "GET", path: "/checkout/logs/?apikey=k&token={checkout_id}",
		code: 200, status: "success", fields: []string{"is_paid", "payment_data", "notifications"}},
	{op: "deposit", method: "GET", path: "/deposit/request/?apikey=k&notify_url={merchant}",
		code: 200, status: "success", fields: []string{"payment_url", "payment_id"},
		save: map[string]string{"payment_id": "deposit_id"}},
	{op: "depositlogs", method: "GET", path: "/deposit/logs/?apikey=k&token={deposit_id}",
		code: 200, status: "success", fields: []string{"deposits", "total_deposited", "currency", "notifications"}},
	{op: "payoutaddress", method: "GET", path: "/btc/payout/address/?apikey=k",
		code: 200, status: "success", fields: []string{"address"}},
	{op: "payoutbalance", method: "GET", path: "/btc/payout/balance/?apikey=k",
		code: 200, status: "success", fields: []string{"balance"}},
	{op: "payout", method: "GET", path: "/btc/payout/request/create/?apikey=k&address=" + btcDest2 + "&value=0.01",
		code: 200, status: "success"},
	{op: "bulk", method: "POST", path: "/btc/payout/request/bulk/?apikey=k", json: `{"outputs":{"` + btcDest + `":0.02}}`,
		code: 200, status: "success", fields: []string{"request_ids"}, save: map[string]string{"request_ids": "request_ids"}},
	{op: "requestlist", method: "GET", path: "/btc/payout/request/list/?apikey=k&status=pending&p=1",
		code: 200, status: "success", fields: []string{"requests", "num_pages"}},
	{op: "payoutcreate", method: "POST", path: "/payout/create/?apikey=k", form: url.Values{"request_ids": {"{request_ids}"}},
		code: 200, status: "success", fields: []string{"payout_info"}, save: map[string]string{"payout_info.id": "payout_id"}},
	{op: "payoutprocess", method: "POST", path: "/payout/process/?apikey=k", form: url.Values{"payout_id": {"{payout_id}"}},
		code: 200, status: "success", fields: []string{"queued"}},
	{op: "payoutstatus", method: "POST", path: "/payout/status/?apikey=k", form: url.Values{"payout_id": {"{payout_id}"}},
		code: 200, status: "success", fields: []string{"payout_info"}},
	{op: "bulkprocess", method: "POST", path: "/btc/payout/request/bulk/process/?apikey=k", json: `{"outputs":{"` + btcDest3 + `":0.01}}`,
		code: 200, status: "success", fields: []string{"queued", "payout_info"}},
	{op: "payoutlist", method: "GET", path: "/btc/payout/list/?apikey=k&status=processing&p=1",
		code: 200, status: "success", fields: []string{"payouts", "num_pages"}},
}

// TestEveryRouteAnswersTheServiceStatus calls every operation of the fake
// in the API-key form and checks that its answer carries the status the
// service sends, and the fields the libraries read; then calls each one
// with a wrong key, which the service answers {"status":"error"} with an
// "error" message.
func TestEveryRouteAnswersTheServiceStatus(t *testing.T) {
	s := newServer(t, cryptapitest.WithAPIKey("k"))
	m := newMerchant(t)
	require.NoError(t, s.FundPayoutWallet("btc", dec("1")))
	vars := map[string]string{"merchant": url.QueryEscape(m.URL + "/cb?order=1")}
	fill := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	call := func(rt route, path string) (int, map[string]any) {
		t.Helper()
		var body io.Reader
		ctype := ""
		switch {
		case rt.json != "":
			body, ctype = strings.NewReader(rt.json), "application/json"
		case rt.form != nil:
			f := url.Values{}
			for k, vs := range rt.form {
				for _, v := range vs {
					f.Add(k, fill(v))
				}
			}
			body, ctype = strings.NewReader(f.Encode()), "application/x-www-form-urlencoded"
		}
		req, err := http.NewRequest(rt.method, s.URL()+path, body)
		require.NoError(t, err)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), "%s %s", rt.method, path)
		var out map[string]any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		require.NoError(t, d.Decode(&out), "%s %s: %s", rt.method, path, data)
		return resp.StatusCode, out
	}

	for _, rt := range routes {
		t.Run(rt.op, func(t *testing.T) {
			code, out := call(rt, fill(rt.path))
			require.Equal(t, rt.code, code, "%v", out)
			if rt.status == "" {
				assert.NotContains(t, out, "status", "the service sends no status here")
			} else {
				assert.Equal(t, rt.status, out["status"], "the status the service sends: %v", out)
			}
			for _, f := range rt.fields {
				assert.Contains(t, out, f)
			}
			for from, name := range rt.save {
				v := any(out)
				for _, k := range strings.Split(from, ".") {
					v = v.(map[string]any)[k]
				}
				switch x := v.(type) {
				case []any:
					ids := make([]string, len(x))
					for i, id := range x {
						ids[i] = toText(id)
					}
					vars[name] = strings.Join(ids, ",")
				default:
					vars[name] = toText(x)
				}
			}

			// A wrong key: the service's error shape.
			wrong := strings.Replace(fill(rt.path), "apikey=k", "apikey=wrong", 1)
			if !strings.Contains(wrong, "apikey=") {
				wrong += map[bool]string{true: "&", false: "?"}[strings.Contains(wrong, "?")] + "apikey=wrong"
			}
			code, out = call(rt, wrong)
			assert.Equal(t, http.StatusUnauthorized, code)
			assert.Equal(t, "error", out["status"])
			assert.NotEmpty(t, out["error"])
		})
	}

	// The hosted page is HTML, as the service's is.
	resp, err := http.Get(s.URL() + "/pay/" + vars["checkout_id"] + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
}

func toText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// TestRoutesListsEveryOperation: every operation the fake's router serves
// (the cases of route and routePayout) has a row in routes.
func TestRoutesListsEveryOperation(t *testing.T) {
	served := map[string]bool{"paypage": true} // served before the switch, checked above
	fset := token.NewFileSet()
	for _, file := range []string{"handlers.go", "payouts.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if !ok || (fn.Name.Name != "route" && fn.Name.Name != "routePayout") {
				return true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if cc, ok := n.(*ast.CaseClause); ok {
					for _, e := range cc.List {
						if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							name, _ := strconv.Unquote(lit.Value)
							served[name] = true
						}
					}
				}
				return true
			})
			return false
		})
	}
	listed := map[string]bool{"paypage": true}
	for _, rt := range routes {
		listed[rt.op] = true
	}
	var missing []string
	for name := range served {
		if !listed[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "operations without a row in routes")
	assert.Len(t, served, 24, "the operations found in the router")
}
