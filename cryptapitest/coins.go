package cryptapitest

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Chains: the address family of a coin, also the scheme of its payment
// URI.
const (
	ChainBitcoin     = "bitcoin"     // bc1q... (also legacy 1... and 3...)
	ChainLitecoin    = "litecoin"    // ltc1q... (also L..., M..., 3...)
	ChainBitcoinCash = "bitcoincash" // bitcoincash:q...
	ChainEthereum    = "ethereum"    // 0x + 40 hex digits; ERC-20, BEP-20 and Polygon too
	ChainTron        = "tron"        // T + 33 base58 characters; TRC-20 too
)

// Coin describes a coin or token the server knows. Amounts are in coin
// units.
type Coin struct {
	// Name is the display name, "Bitcoin".
	Name string
	// Chain is the address family (ChainBitcoin, ...).
	Chain string
	// Decimals is the number of decimals of the smallest unit (8 for BTC).
	Decimals int32
	// MinimumTransaction is the smallest payment that is forwarded, for one
	// destination. With N destinations it is multiplied by 1 + (N-1)/3.
	MinimumTransaction decimal.Decimal
	// MinimumFee is the smallest service fee taken from a payment.
	MinimumFee decimal.Decimal
	// FeePercent is the service fee in percent of the payment.
	FeePercent decimal.Decimal
	// NetworkFee is the estimated blockchain cost of forwarding to one
	// destination at the default priority.
	NetworkFee decimal.Decimal
	// Prices maps upper-case fiat codes to the coin's price. Callbacks use
	// the USD price.
	Prices map[string]decimal.Decimal
	// Priorities are the allowed create and estimate priorities; empty
	// means "default", "economic" and "fast".
	Priorities []string
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func prices(usd, eur, gbp string) map[string]decimal.Decimal {
	return map[string]decimal.Decimal{"USD": d(usd), "EUR": d(eur), "GBP": d(gbp)}
}

// DefaultCoins returns the coins a server knows unless told otherwise:
// btc, eth, ltc, bch, trx, and usdt on trc20, erc20, bep20 and polygon.
// The map is a fresh copy, keyed by ticker in "trc20_usdt" form.
func DefaultCoins() map[string]Coin {
	usdt := prices("1.00", "0.92", "0.79")
	return map[string]Coin{
		"btc": {Name: "Bitcoin", Chain: ChainBitcoin, Decimals: 8,
			MinimumTransaction: d("0.0001"), MinimumFee: d("0.00001"), FeePercent: d("1"),
			NetworkFee: d("0.00002"), Prices: prices("60000.00", "55200.00", "47400.00")},
		"eth": {Name: "Ethereum", Chain: ChainEthereum, Decimals: 18,
			MinimumTransaction: d("0.005"), MinimumFee: d("0.0001"), FeePercent: d("1"),
			NetworkFee: d("0.0004"), Prices: prices("3000.00", "2760.00", "2370.00"),
			Priorities: []string{"default", "fast", "fastest"}},
		"ltc": {Name: "Litecoin", Chain: ChainLitecoin, Decimals: 8,
			MinimumTransaction: d("0.002"), MinimumFee: d("0.0002"), FeePercent: d("1"),
			NetworkFee: d("0.00005"), Prices: prices("80.00", "73.60", "63.20")},
		"bch": {Name: "Bitcoin Cash", Chain: ChainBitcoinCash, Decimals: 8,
			MinimumTransaction: d("0.002"), MinimumFee: d("0.0002"), FeePercent: d("1"),
			NetworkFee: d("0.00001"), Prices: prices("400.00", "368.00", "316.00")},
		"trx": {Name: "Tron", Chain: ChainTron, Decimals: 6,
			MinimumTransaction: d("5"), MinimumFee: d("1"), FeePercent: d("1"),
			NetworkFee: d("1.1"), Prices: prices("0.12", "0.11", "0.095")},
		"trc20_usdt": {Name: "Tether USD (TRC-20)", Chain: ChainTron, Decimals: 6,
			MinimumTransaction: d("5"), MinimumFee: d("1"), FeePercent: d("1"),
			NetworkFee: d("2.5"), Prices: usdt},
		"erc20_usdt": {Name: "Tether USD (ERC-20)", Chain: ChainEthereum, Decimals: 6,
			MinimumTransaction: d("20"), MinimumFee: d("2"), FeePercent: d("1"),
			NetworkFee: d("5"), Prices: usdt, Priorities: []string{"default", "fast", "fastest"}},
		"bep20_usdt": {Name: "Tether USD (BEP-20)", Chain: ChainEthereum, Decimals: 18,
			MinimumTransaction: d("5"), MinimumFee: d("0.5"), FeePercent: d("1"),
			NetworkFee: d("0.2"), Prices: usdt},
		"polygon_usdt": {Name: "Tether USD (Polygon)", Chain: ChainEthereum, Decimals: 6,
			MinimumTransaction: d("2"), MinimumFee: d("0.1"), FeePercent: d("1"),
			NetworkFee: d("0.05"), Prices: usdt},
	}
}

// normalizeCoin fills defaults and checks a coin given to WithCoin.
func normalizeCoin(key string, c Coin) (*Coin, error) {
	t, err := parseTicker(key)
	if err != nil {
		return nil, fmt.Errorf("coin %q: not a ticker", key)
	}
	if c.Name == "" {
		c.Name = strings.ToUpper(t.Coin)
	}
	if c.Chain == "" {
		switch t.Network {
		case "trc20":
			c.Chain = ChainTron
		case "erc20", "bep20", "polygon":
			c.Chain = ChainEthereum
		case "":
			if def, ok := DefaultCoins()[key]; ok {
				c.Chain = def.Chain
			}
		}
	}
	switch c.Chain {
	case ChainBitcoin, ChainLitecoin, ChainBitcoinCash, ChainEthereum, ChainTron:
	default:
		return nil, fmt.Errorf("coin %q: unknown or missing Chain %q", key, c.Chain)
	}
	if c.Decimals == 0 {
		c.Decimals = 8
	}
	if c.Decimals < 0 || c.Decimals > 30 {
		return nil, fmt.Errorf("coin %q: Decimals out of range", key)
	}
	if c.MinimumTransaction.IsNegative() || c.MinimumFee.IsNegative() || c.FeePercent.IsNegative() || c.NetworkFee.IsNegative() {
		return nil, fmt.Errorf("coin %q: negative amount", key)
	}
	p := make(map[string]decimal.Decimal, len(c.Prices))
	for k, v := range c.Prices {
		if !v.IsPositive() {
			return nil, fmt.Errorf("coin %q: price of %s must be positive", key, k)
		}
		p[strings.ToUpper(k)] = v
	}
	c.Prices = p
	if len(c.Priorities) == 0 {
		c.Priorities = []string{"default", "economic", "fast"}
	} else {
		c.Priorities = append([]string(nil), c.Priorities...)
	}
	return &c, nil
}

// minimumFor is the minimum payment for n destinations:
// minimum x (1 + (n-1)/3), rounded up to the smallest unit.
func (c *Coin) minimumFor(n int) decimal.Decimal {
	if n < 1 {
		n = 1
	}
	m := c.MinimumTransaction.Mul(decimal.NewFromInt(int64(n + 2))).Div(decimal.NewFromInt(3))
	return m.RoundCeil(c.Decimals)
}

// smallest converts coin units to the integer smallest unit (truncated).
func (c *Coin) smallest(v decimal.Decimal) decimal.Decimal {
	return v.Shift(c.Decimals).Truncate(0)
}

func (c *Coin) priorityAllowed(p string) bool {
	for _, q := range c.Priorities {
		if q == p {
			return true
		}
	}
	return false
}
