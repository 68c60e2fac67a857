package cryptapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Regenerate the generated fixtures with: go test -run TestFixtures -update .
var update = flag.Bool("update", false, "rewrite the generated files in testdata/")

// fiat are the currencies of the prices maps in the all-coins answer.
var fiat = []string{
	"USD", "EUR", "GBP", "CAD", "JPY", "AED", "DKK", "BRL", "CNY", "HKD",
	"INR", "MXN", "UGX", "PLN", "PHP", "CZK", "HUF", "BGN", "RON", "LKR",
}

// fiatRate converts a USD price into fiat[i].
var fiatRate = []float64{
	1, 0.921, 0.786, 1.366, 156.1, 3.673, 6.872, 5.131, 7.236, 7.809,
	83.37, 16.69, 3796.2, 3.933, 58.0, 22.91, 357.6, 1.801, 4.583, 299.4,
}

type genCoin struct {
	ticker   string // record ticker as the service writes it
	name     string
	decimals int
	minimum  string // minimum transaction in coin units
	usd      float64
}

// natives are the native coins of the all-coins answer.
var natives = []genCoin{
	{"btc", "Bitcoin", 8, "0.00008", 67152.91},
	{"bch", "Bitcoin Cash", 8, "0.002", 481.2},
	{"ltc", "Litecoin", 8, "0.002", 84.7},
	{"doge", "Dogecoin", 8, "5", 0.1612},
	{"dash", "Dash", 8, "0.01", 31.4},
	{"xmr", "Monero", 12, "0.005", 134.9},
	{"zec", "Zcash", 8, "0.02", 24.1},
	{"eth", "Ethereum", 18, "0.005", 3842.15},
	{"etc", "Ethereum Classic", 18, "0.05", 31.2},
	{"bnb", "BNB", 18, "0.004", 598.3},
	{"matic", "Polygon", 18, "1", 0.7211},
	{"trx", "Tron", 6, "5", 0.1224},
	{"sol", "Solana", 9, "0.01", 171.4},
	{"avax-c", "Avalanche C-Chain", 18, "0.05", 37.9},
	{"ada", "Cardano", 6, "2", 0.4712},
	{"xrp", "XRP", 6, "5", 0.5233},
	{"ton", "Toncoin", 9, "0.5", 6.43},
	{"base", "Base", 18, "0.002", 3842.15},
	{"arb", "Arbitrum One", 18, "0.002", 3842.15},
	{"op", "Optimism", 18, "0.002", 3842.15},
	{"celo", "Celo", 18, "1", 0.8421},
	{"xlm", "Stellar", 7, "10", 0.1098},
	{"algo", "Algorand", 6, "5", 0.1791},
	{"near", "NEAR", 24, "0.5", 7.12},
	{"dot", "Polkadot", 10, "1", 7.18},
	{"xtz", "Tezos", 6, "2", 0.9012},
	{"atom", "Cosmos", 6, "0.5", 8.31},
	{"eos", "EOS", 4, "5", 0.8142},
	{"bsv", "Bitcoin SV", 8, "0.02", 66.5},
	{"rvn", "Ravencoin", 8, "100", 0.0291},
	{"kas", "Kaspa", 8, "20", 0.1713},
	{"hbar", "Hedera", 8, "20", 0.1102},
	{"vet", "VeChain", 18, "100", 0.0381},
	{"fil", "Filecoin", 18, "1", 5.92},
	{"icp", "Internet Computer", 8, "0.5", 12.1},
}

// tokenNames are the tokens, with the networks that carry each.
var tokenNames = []struct {
	ticker, name string
	usd          float64
	minimum      string
	on           string // space-separated network keys
}{
	{"usdt", "Tether USD", 1.0003, "5", "erc20 bep20 trc20 polygon spl arbitrum optimism jetton"},
	{"usdc", "USD Coin", 0.9998, "5", "erc20 bep20 trc20 polygon spl arbitrum optimism jetton"},
	{"dai", "Dai", 1.0001, "5", "erc20 bep20 polygon arbitrum optimism"},
	{"busd", "Binance USD", 1.0002, "5", "erc20 bep20 trc20"},
	{"tusd", "TrueUSD", 0.9987, "5", "erc20 bep20 trc20 polygon"},
	{"pyusd", "PayPal USD", 1.0, "5", "erc20 spl"},
	{"usdd", "Decentralized USD", 0.9991, "5", "trc20 bep20"},
	{"frax", "Frax", 0.9979, "5", "erc20 polygon arbitrum optimism"},
	{"shib", "Shiba Inu", 0.00002731, "9518700", "erc20 bep20"},
	{"pepe", "Pepe", 0.00001412, "500000000", "erc20 bep20 arbitrum"},
	{"link", "Chainlink", 17.42, "0.5", "erc20 bep20 polygon arbitrum optimism"},
	{"uni", "Uniswap", 10.11, "1", "erc20 bep20 polygon arbitrum optimism"},
	{"aave", "Aave", 103.2, "0.1", "erc20 polygon arbitrum optimism"},
	{"wbtc", "Wrapped Bitcoin", 67110.4, "0.0001", "erc20 polygon arbitrum optimism spl"},
	{"weth", "Wrapped Ether", 3840.02, "0.003", "polygon bep20 spl"},
	{"usdc.e", "Bridged USD Coin", 0.9997, "5", "polygon arbitrum optimism"},
	{"inr", "Indian Rupee Token", 0.01199, "500", "erc20 polygon"},
	{"euroc", "Euro Coin", 1.0859, "5", "erc20 spl"},
	{"mkr", "Maker", 2891.5, "0.002", "erc20"},
	{"ldo", "Lido DAO", 2.12, "3", "erc20 polygon arbitrum optimism"},
	{"grt", "The Graph", 0.2981, "20", "erc20 arbitrum"},
	{"ape", "ApeCoin", 1.31, "5", "erc20"},
	{"sand", "The Sandbox", 0.4577, "10", "erc20 polygon"},
	{"mana", "Decentraland", 0.4421, "10", "erc20 polygon"},
	{"crv", "Curve DAO", 0.4712, "10", "erc20 polygon arbitrum optimism"},
	{"ftm", "Fantom", 0.7012, "5", "erc20 bep20"},
	{"cake", "PancakeSwap", 2.61, "2", "bep20"},
	{"xvs", "Venus", 9.12, "0.5", "bep20"},
	{"bonk", "Bonk", 0.00002561, "200000", "spl"},
	{"jup", "Jupiter", 1.12, "5", "spl"},
	{"btt", "BitTorrent", 0.0000012, "5000000", "trc20"},
	{"win", "WINkLink", 0.00011, "50000", "trc20"},
	{"not", "Notcoin", 0.0158, "300", "jetton"},
	{"gala", "Gala", 0.0412, "100", "erc20 bep20"},
	{"ens", "Ethereum Name Service", 22.4, "0.3", "erc20"},
	{"comp", "Compound", 58.1, "0.1", "erc20 polygon"},
	{"sushi", "SushiSwap", 1.12, "5", "erc20 bep20 polygon arbitrum"},
	{"1inch", "1inch", 0.4211, "10", "erc20 bep20"},
	{"snx", "Synthetix", 2.91, "2", "erc20 optimism"},
	{"op", "Optimism", 2.43, "2", "optimism"},
	{"arb", "Arbitrum", 1.09, "5", "arbitrum"},
}

// networks are the token networks and the decimals their tokens use.
var networks = []struct {
	key      string
	decimals int
}{
	{"erc20", 18}, {"bep20", 18}, {"trc20", 6}, {"polygon", 18},
	{"spl", 9}, {"arbitrum", 18}, {"optimism", 18}, {"jetton", 9},
}

func tokenOn(on, network string) bool {
	for _, n := range strings.Fields(on) {
		if n == network {
			return true
		}
	}
	return false
}

// genAllCoins builds the all-coins answer fixture: about 150 records of
// native coins and tokens, with amounts as numbers and as strings,
// smallest-unit integers beyond 64 bits, exponent forms, prices maps that
// are full, empty ({} and []), prices_updated as ISO text and null, and a
// key that is not a ticker. The output is deterministic.
func genAllCoins() []byte {
	rng := rand.New(rand.NewPCG(7, 11))
	var b bytes.Buffer
	b.WriteString("{\n")
	n := 0
	writeRecord := func(indent, tick, name string, decimals int, minimum string, usd float64) {
		n++
		minCoin := mustDec(minimum)
		unit := mustDec("1").Shift(int32(decimals))
		minSmallest := minCoin.Mul(unit)
		fee := minCoin.Div(mustDec("10")).Round(int32(decimals))
		feeSmallest := fee.Mul(unit)
		netFee := fmt.Sprintf("%.*f", min(decimals, 8), rng.Float64()*0.3*minCoin.InexactFloat64())
		fmt.Fprintf(&b, "%s\"coin\": %q,\n", indent, name)
		fmt.Fprintf(&b, "%s\"logo\": \"https://api.cryptapi.io/media/token_logos/%s.png\",\n", indent, strings.ReplaceAll(tick, ".", "_"))
		fmt.Fprintf(&b, "%s\"ticker\": %q,\n", indent, tick)
		// Smallest units: a JSON number (beyond 64 bits for 18-decimal
		// tokens), a string every fifth record, exponent form for shib.
		switch {
		case tick == "shib" && decimals == 18:
			fmt.Fprintf(&b, "%s\"minimum_transaction\": 9.5187e+24,\n", indent)
		case n%5 == 0:
			fmt.Fprintf(&b, "%s\"minimum_transaction\": %q,\n", indent, minSmallest.String())
		default:
			fmt.Fprintf(&b, "%s\"minimum_transaction\": %s,\n", indent, minSmallest.String())
		}
		if n%7 == 0 {
			fmt.Fprintf(&b, "%s\"minimum_transaction_coin\": %s,\n", indent, minCoin.String())
		} else {
			fmt.Fprintf(&b, "%s\"minimum_transaction_coin\": %q,\n", indent, minCoin.StringFixed(int32(min(decimals, 18))))
		}
		fmt.Fprintf(&b, "%s\"minimum_fee\": %s,\n", indent, feeSmallest.String())
		fmt.Fprintf(&b, "%s\"minimum_fee_coin\": %q,\n", indent, fee.StringFixed(int32(min(decimals, 18))))
		fmt.Fprintf(&b, "%s\"fee_percent\": \"1.000\",\n", indent)
		if n%11 == 0 {
			fmt.Fprintf(&b, "%s\"network_fee_estimation\": \"0E-8\",\n", indent)
		} else {
			fmt.Fprintf(&b, "%s\"network_fee_estimation\": %q,\n", indent, netFee)
		}
		switch {
		case n%13 == 0:
			fmt.Fprintf(&b, "%s\"prices\": {},\n", indent)
			fmt.Fprintf(&b, "%s\"prices_updated\": null\n", indent)
			return
		case n%17 == 0:
			fmt.Fprintf(&b, "%s\"prices\": [],\n", indent)
			fmt.Fprintf(&b, "%s\"prices_updated\": null\n", indent)
			return
		}
		fmt.Fprintf(&b, "%s\"prices\": {", indent)
		for i, f := range fiat {
			if i > 0 {
				b.WriteString(", ")
			}
			p := usd * fiatRate[i] * (1 + (rng.Float64()-0.5)*0.002)
			prec := 2
			if p < 1 {
				prec = 8
			}
			fmt.Fprintf(&b, "%q: \"%.*f\"", f, prec, p)
		}
		b.WriteString("},\n")
		fmt.Fprintf(&b, "%s\"prices_updated\": \"2024-05-21T09:%02d:%02d.%06dZ\"\n", indent, n%60, (n*7)%60, rng.IntN(1000000))
	}
	first := true
	sep := func() {
		if !first {
			b.WriteString(",\n")
		}
		first = false
	}
	for _, c := range natives {
		sep()
		fmt.Fprintf(&b, "  %q: {\n", c.ticker)
		writeRecord("    ", c.ticker, c.name, c.decimals, c.minimum, c.usd)
		b.WriteString("  }")
	}
	for _, net := range networks {
		sep()
		fmt.Fprintf(&b, "  %q: {\n", net.key)
		firstTok := true
		for _, tok := range tokenNames {
			if !tokenOn(tok.on, net.key) {
				continue
			}
			if !firstTok {
				b.WriteString(",\n")
			}
			firstTok = false
			dec := net.decimals
			if (tok.ticker == "usdt" || tok.ticker == "usdc") && net.key != "bep20" {
				dec = 6
			}
			if tok.ticker == "wbtc" {
				dec = 8
			}
			fmt.Fprintf(&b, "    %q: {\n", tok.ticker)
			writeRecord("      ", tok.ticker, tok.name, dec, tok.minimum, tok.usd)
			b.WriteString("    }")
		}
		b.WriteString("\n  }")
	}
	sep()
	b.WriteString(`  "fee_tiers": [{"minimum": "0", "fee": "1.000"}, {"minimum": "1000000", "fee": "0.500"}]`)
	b.WriteString("\n}\n")
	return b.Bytes()
}

// allCoinsRecords is how many coin records genAllCoins writes.
func allCoinsRecords() int {
	n := len(natives)
	for _, net := range networks {
		for _, tok := range tokenNames {
			if tokenOn(tok.on, net.key) {
				n++
			}
		}
	}
	return n
}

// genQRPNG draws a QR-like image (finder patterns and a module grid) and
// encodes it as PNG.
func genQRPNG() []byte {
	const modules, scale = 29, 4
	img := image.NewGray(image.Rect(0, 0, (modules+8)*scale, (modules+8)*scale))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	rng := rand.New(rand.NewPCG(3, 5))
	dark := func(x, y int) bool {
		for _, o := range [][2]int{{0, 0}, {modules - 7, 0}, {0, modules - 7}} {
			dx, dy := x-o[0], y-o[1]
			if dx >= 0 && dx < 7 && dy >= 0 && dy < 7 {
				return dx == 0 || dx == 6 || dy == 0 || dy == 6 || (dx >= 2 && dx <= 4 && dy >= 2 && dy <= 4)
			}
		}
		return rng.IntN(2) == 0
	}
	for y := 0; y < modules; y++ {
		for x := 0; x < modules; x++ {
			if !dark(x, y) {
				continue
			}
			for py := 0; py < scale; py++ {
				for px := 0; px < scale; px++ {
					img.SetGray((x+4)*scale+px, (y+4)*scale+py, color.Gray{})
				}
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func genQRCodeAnswer() []byte {
	ans := map[string]string{
		"status":      "success",
		"qr_code":     base64.StdEncoding.EncodeToString(genQRPNG()),
		"payment_uri": "bitcoin:3DmYQg5wb34ETWYTjuwHniMryhCtHQnGub?amount=0.00125",
	}
	b, err := json.MarshalIndent(ans, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// TestFixtures keeps the generated fixtures in step with their generators
// (run with -update to rewrite them) and checks their shape.
func TestFixtures(t *testing.T) {
	gen := map[string]func() []byte{
		"info_all.json": genAllCoins,
		"qrcode.json":   genQRCodeAnswer,
	}
	for name, g := range gen {
		path := filepath.Join("testdata", name)
		if *update {
			require.NoError(t, os.WriteFile(path, g(), 0o644))
		}
	}
	all := fixture(t, "info_all.json")
	assert.Equal(t, string(genAllCoins()), string(all), "testdata/info_all.json is stale: go test -run TestFixtures -update .")
	assert.Less(t, len(all), 200<<10, "the all-coins fixture should stay modest")
	assert.True(t, json.Valid(all))
	assert.GreaterOrEqual(t, allCoinsRecords(), 140)

	// The QR fixture must hold a real PNG (PNG bytes may differ between Go
	// versions, so it is not compared with the generator's output).
	var qr struct {
		QRCode string `json:"qr_code"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "qrcode.json"), &qr))
	raw, err := base64.StdEncoding.DecodeString(qr.QRCode)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, 148, img.Bounds().Dx())
}
