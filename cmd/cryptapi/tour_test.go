package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/forwardpay/cryptapi-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneBaseURLForEveryCommand: after one export of CRYPTAPI_BASE_URL,
// create, sim pay, sim confirm and logs all talk to the simulator; no
// command needs -base-url or -sim.
func TestOneBaseURLForEveryCommand(t *testing.T) {
	shop := newMerchant(t)
	sim := startSim(t, "-json")
	env := map[string]string{envBaseURL: sim.event().BaseURL}
	cb := shop.URL + "/cb"

	r := cli(t, env, "create", "-ticker", "btc", "-address", merchantAddress, "-callback", cb, "-pending", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var addr struct {
		AddressIn string `json:"address_in"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &addr))
	r = cli(t, env, "sim", "pay", "-ticker", "btc", "-address-in", addr.AddressIn, "-amount", "0.01", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var paid struct {
		TxID string `json:"txid"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &paid))
	r = cli(t, env, "sim", "confirm", "-txid", paid.TxID, "-json")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, env, "logs", "-ticker", "btc", "-callback", cb, "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var logs struct {
		AddressIn string `json:"address_in"`
		Payments  []struct {
			TxIDIn    string `json:"txid_in"`
			Confirmed bool   `json:"confirmed"`
		} `json:"payments"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &logs))
	assert.Equal(t, addr.AddressIn, logs.AddressIn)
	require.Len(t, logs.Payments, 1)
	assert.Equal(t, paid.TxID, logs.Payments[0].TxIDIn)
	assert.True(t, logs.Payments[0].Confirmed)
}

// TestOldFlagNamesStillWork: the spellings replaced by one name per idea
// are accepted for a release, mean the same, and are not listed by -h.
func TestOldFlagNamesStillWork(t *testing.T) {
	f := setup(t)
	r := cli(t, nil, "convert", "-base-url", f.base(), "-ticker", "btc", "-value", "25", "-from", "USD")
	require.Equal(t, 0, r.code, r.stderr)
	r2 := cli(t, nil, "convert", "-base-url", f.base(), "-ticker", "btc", "-amount", "25", "-currency", "USD")
	require.Equal(t, 0, r2.code, r2.stderr)
	reqs := f.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].Query, reqs[1].Query, "old and new names send the same request")
	assert.Equal(t, "25", reqs[1].Query.Get("value"))
	assert.Equal(t, "USD", reqs[1].Query.Get("from"))

	// sim pay with -sim, -address and CRYPTAPI_SIM_URL, as before.
	shop := newMerchant(t)
	sim := startSim(t, "-json")
	base := sim.event().BaseURL
	r = cli(t, nil, "create", "-base-url", base, "-ticker", "btc", "-address", merchantAddress, "-callback", shop.URL+"/cb", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var addr struct {
		AddressIn string `json:"address_in"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &addr))
	r = cli(t, nil, "sim", "pay", "-sim", base, "-ticker", "btc", "-address", addr.AddressIn, "-amount", "0.01")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, map[string]string{envSimURL: base}, "sim", "pay", "-ticker", "btc", "-address-in", addr.AddressIn, "-amount", "0.01")
	require.Equal(t, 0, r.code, r.stderr)

	for _, c := range []struct {
		path []string
		old  []string
	}{
		{[]string{"convert"}, []string{"-value", "-from"}},
		{[]string{"qrcode"}, []string{"-value", "-address "}},
		{[]string{"checkout"}, []string{"-value", "-retries"}},
		{[]string{"deposit"}, []string{"-retries"}},
		{[]string{"payout"}, []string{"-value", "-retries"}},
		{[]string{"sim", "pay"}, []string{"-sim", "-address "}},
		{[]string{"sim", "confirm"}, []string{"-sim"}},
	} {
		r := cli(t, nil, append(c.path, "-h")...)
		require.Equal(t, 0, r.code)
		for _, old := range c.old {
			assert.NotContains(t, r.stdout, "  "+old, "%v -h lists %s", c.path, old)
		}
	}
}

// TestOneFlagNamePerIdea: every command spells the amount -amount and
// the address created for a payment -address-in.
func TestOneFlagNamePerIdea(t *testing.T) {
	for _, p := range allCommandPaths() {
		r := cli(t, nil, append(p, "-h")...)
		require.Equal(t, 0, r.code, "%v -h", p)
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "  -") {
				name := strings.Fields(l)[0]
				assert.NotContains(t, []string{"-value", "-from", "-sim"}, name, "%v", p)
			}
			if strings.HasPrefix(l, "    \t") && strings.Contains(l, "address_in") {
				t.Errorf("%v: address_in described by another flag name: %s", p, l)
			}
		}
	}
}

// TestJSONErrors: under -json every error, a wrong command line, a
// failure reported by the service and an unreachable service, is one JSON
// object on stdout with the exit status, and nothing on stderr.
func TestJSONErrors(t *testing.T) {
	var hits int
	var mu sync.Mutex
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"error","error":"busy"}`))
	}))
	defer busy.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	cases := []struct {
		name       string
		args       []string
		code       int
		status     int
		attempts   int
		msgContain string
	}{
		{"flag before -json", []string{"convert", "-amount", "x", "-json"}, 2, 0, 0, "not a decimal number"},
		{"missing flag", []string{"info", "-json"}, 2, 0, 0, "-ticker is required"},
		{"refused before sending", []string{"info", "-json", "-ticker", "../x"}, 2, 0, 0, "invalid ticker"},
		{"service busy", []string{"info", "-json", "-ticker", "btc", "-base-url", busy.URL, "-retries", "2"}, 1, 503, 3, "(after 3 attempts)"},
		{"unreachable", []string{"info", "-json", "-ticker", "btc", "-base-url", gone.URL, "-retries", "1"}, 1, 0, 2, "(after 2 attempts)"},
		{"sim unreachable", []string{"sim", "pay", "-json", "-base-url", gone.URL, "-ticker", "btc", "-address-in", "x", "-amount", "1"}, 1, 0, 0, "cannot reach the simulator"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, map[string]string{envAPIKey: testKey}, c.args...)
			assert.Equal(t, c.code, r.code)
			assert.Empty(t, r.stderr)
			var out map[string]map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
			e := out["error"]
			require.NotNil(t, e, r.stdout)
			assert.Equal(t, strings.Join(c.args[:commandWords(c.args)], " "), e["command"])
			assert.Equal(t, float64(c.code), e["exit_code"])
			assert.Contains(t, e["message"], c.msgContain)
			if c.status != 0 {
				assert.Equal(t, float64(c.status), e["http_status"])
			} else {
				assert.NotContains(t, e, "http_status")
			}
			if c.attempts != 0 {
				assert.Equal(t, float64(c.attempts), e["attempts"])
			} else {
				assert.NotContains(t, e, "attempts")
			}
			for k := range e {
				assert.Contains(t, []string{"command", "message", "exit_code", "http_status", "attempts"}, k)
			}
			assertNoKey(t, r, c.args)
		})
	}
	assert.Equal(t, 3, hits, "three attempts reached the busy service")
}

// commandWords is how many of args name the command.
func commandWords(args []string) int {
	if args[0] == "sim" {
		return 2
	}
	return 1
}

// TestVerboseLogsEachAttempt: -v logs every attempt on stderr through the
// client's logger, with the key replaced, and the error counts them.
func TestVerboseLogsEachAttempt(t *testing.T) {
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"status":"error","error":"busy"}`, http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	args := []string{"info", "-v", "-ticker", "btc", "-base-url", busy.URL, "-retries", "3", "-api-key", testKey}
	r := cli(t, nil, args...)
	assert.Equal(t, 1, r.code)
	for i := 1; i <= 4; i++ {
		assert.Contains(t, r.stderr, "attempt="+string(rune('0'+i)))
	}
	assert.NotContains(t, r.stderr, "attempt=5")
	assert.Contains(t, r.stderr, "apikey=REDACTED")
	assert.Contains(t, r.stderr, "(after 4 attempts)")
	assertNoKey(t, r, args)

	// Without -v, the count only.
	r = cli(t, nil, "info", "-ticker", "btc", "-base-url", busy.URL, "-retries", "3")
	assert.NotContains(t, r.stderr, "attempt=")
	assert.Contains(t, r.stderr, "(after 4 attempts)")
}

// TestVersionAgreesWithUserAgent: the version command, the SDK's Version
// and the User-Agent the tool sends say the same version.
func TestVersionAgreesWithUserAgent(t *testing.T) {
	var ua string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua = r.Header.Get("User-Agent")
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srv.Close()
	_ = cli(t, nil, "info", "-ticker", "btc", "-base-url", srv.URL)
	assert.Equal(t, "cryptapi-cli/"+cryptapi.Version, ua)

	r := cli(t, nil, "version", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	var v struct {
		Version   string `json:"version"`
		UserAgent string `json:"user_agent"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	assert.Equal(t, cryptapi.Version, v.Version)
	assert.Equal(t, ua, v.UserAgent)
	r = cli(t, nil, "version")
	assert.Regexp(t, `(?m)^Version +`+strings.ReplaceAll(cryptapi.Version, ".", `\.`)+`$`, r.stdout)
}
