package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goNames returns the exported names of the SDK's packages (functions,
// types, fields, methods, constants, variables) that no English text
// contains: those with a capital letter after the first, such as
// WithAPIKey, ExpireAt or MultiToken (acronyms such as URL are words).
func goNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{"../..", "../../callback", "../../cryptapitest", "../../invoice"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.IsExported() && strings.IndexFunc(id.Name[1:], unicode.IsUpper) >= 0 &&
					strings.IndexFunc(id.Name, unicode.IsLower) >= 0 {
					names[id.Name] = true
				}
				return true
			})
		}
	}
	require.Contains(t, names, "WithAPIKey")
	return names
}

// TestCLIMessagesNameFlagsNotGoNames: what the tool prints when a
// command fails names its own flags and commands, never the SDK's Go
// options, fields or functions, for every failure a user can cause
// against the simulator in both forms.
func TestCLIMessagesNameFlagsNotGoNames(t *testing.T) {
	names := goNames(t)
	keyless := startSim(t, "-json")
	keyed := startSim(t, "-json", "-api-key", testKey)
	kb, ab := keyless.event().BaseURL, keyed.event().BaseURL
	drain(keyless)
	drain(keyed)
	const btc = "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"
	env := map[string]string{envAPIKey: testKey}
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "x")

	cases := []struct {
		env  map[string]string
		args []string
		want string // a part of the message, naming the flag or command to use
	}{
		{nil, []string{"sim", "fund", "-base-url", kb, "-ticker", "btc", "-amount", "1"}, "sim serve -api-key"},
		{nil, []string{"info", "-base-url", "http://example.com", "-api-key", "k3y", "-ticker", "btc"}, "-base-url must be https"},
		{nil, []string{"info", "-base-url", ab, "-api-key", "a\x01b", "-ticker", "btc"}, "-api-key"},
		{nil, []string{"info", "-base-url", ab + "?x=1", "-ticker", "btc"}, "-base-url"},
		{nil, []string{"payout", "-base-url", kb, "-ticker", "btc", "-address", btc, "-amount", "1"}, "-api-key"},
		{nil, []string{"checkout", "-base-url", kb, "-amount", "10", "-redirect-url", "https://x.example/"}, "-api-key"},
		{env, []string{"checkout", "-base-url", ab, "-amount", "10", "-redirect-url", "https://x.example/", "-expire-at", "10m"}, "-expire-at"},
		{env, []string{"deposit", "-base-url", ab, "-notify-url", "ftp://x"}, ""},
		{nil, []string{"create", "-base-url", kb, "-ticker", "btc", "-callback", "http://x.example/cb"}, ""},
		{nil, []string{"create", "-base-url", kb, "-ticker", "btc", "-callback", "ftp://x", "-address", btc}, ""},
		{nil, []string{"create", "-base-url", kb, "-ticker", "btc", "-callback", "http://x.example/cb", "-param", "uuid=1", "-address", btc}, ""},
		{nil, []string{"create", "-base-url", kb, "-ticker", "btc", "-callback", "http://x.example/cb", "-address", "0.5@" + btc + "|0.4@3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"}, ""},
		{nil, []string{"request", "-base-url", kb, "-ticker", "btc", "-amount", "0.00001", "-callback", "http://x.example/cb", "-address", btc}, ""},
		{nil, []string{"request", "-base-url", kb, "-ticker", "btc", "-amount", "1", "-currency", "XYZ", "-callback", "http://x.example/cb", "-address", btc}, ""},
		{nil, []string{"qrcode", "-base-url", kb, "-ticker", "btc", "-address-in", btc, "-amount", "1", "-out", missing}, ""},
		{nil, []string{"convert", "-base-url", kb, "-ticker", "btc", "-amount", "1", "-currency", "ZZZ"}, ""},
		{nil, []string{"estimate", "-base-url", kb, "-ticker", "btc", "-priority", "turbo"}, ""},
		{nil, []string{"verify", "-url", "http://x", "-signature", "abc"}, ""},
		{nil, []string{"verify", "-body-file", missing, "-signature", "abc"}, ""},
		{nil, []string{"logs", "-base-url", kb, "-ticker", "nope", "-callback", "http://x.example/cb"}, ""},
		{nil, []string{"reconcile", "-base-url", kb, "-ticker", "btc", "-callback", "http://x.example/cb", "-address-in", ""}, ""},
		{nil, []string{"sim", "pay", "-base-url", kb, "-ticker", "btc", "-address-in", "x", "-amount", "1"}, ""},
		{nil, []string{"sim", "pay", "-base-url", kb, "-ticker", "nope", "-address-in", "x", "-amount", "1"}, ""},
		{nil, []string{"sim", "confirm", "-base-url", kb, "-txid", "x"}, ""},
		{nil, []string{"sim", "checkout-pay", "-base-url", kb, "-payment-id", "x", "-ticker", "btc"}, ""},
		{nil, []string{"sim", "fund", "-base-url", ab, "-ticker", "btc", "-amount", "1.123456789"}, ""},
		{nil, []string{"sim", "serve", "-addr", "0.0.0.0:0"}, "-allow-remote"},
		{nil, []string{"sim", "serve", "-addr", "127.0.0.1:0", "-api-key", " "}, ""},
	}
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	for _, c := range cases {
		for _, asJSON := range []bool{false, true} {
			args := c.args
			if asJSON && args[0] != "sim" && args[0] != "verify" {
				args = append(append([]string{}, args...), "-json")
			}
			r := cli(t, c.env, args...)
			assert.NotEqual(t, 0, r.code, "%q failed", args)
			out := r.stdout + r.stderr
			var leaked []string
			for _, w := range word.FindAllString(out, -1) {
				if names[w] {
					leaked = append(leaked, w)
				}
			}
			sort.Strings(leaked)
			assert.Empty(t, leaked, "%q printed Go names: %s", args, out)
			if c.want != "" {
				assert.Contains(t, out, c.want, "%q", args)
			}
		}
	}
	_ = os.Remove(missing)
}
