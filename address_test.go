package cryptapi

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ValidateAddress knows each listed network, tokens by their network,
// refuses another network's address and a mistyped one with the reason,
// and says when it does not know a coin's format.
func TestValidateAddress(t *testing.T) {
	good := map[string][]string{
		"btc":          {"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "BC1SW50QGDZ25J"},
		"ltc":          {"ltc1qlaevvn2ddl8fn92xvwdgsdrzudt8cztufy8ky8"},
		"bch":          {"bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu"},
		"doge":         {"DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"},
		"eth":          {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"},
		"erc20_usdt":   {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		"bep20/usdt":   {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		"polygon_usdt": {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"},
		"trx":          {"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
		"TRC20_USDT":   {"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
	}
	for tk, addrs := range good {
		for _, a := range addrs {
			assert.NoError(t, ValidateAddress(tk, a), "%s %s", tk, a)
		}
	}
	for _, c := range []struct{ ticker, addr, says string }{
		{"btc", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "Tron"},
		{"trc20_usdt", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "Bitcoin"},
		{"eth", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "Bitcoin"},
		{"ltc", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "Bitcoin"},
		{"btc", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr", "checksum"},
		{"eth", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "EIP-55"},
		{"btc", " bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "white space"},
		{"btc", "bc1qаr0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "printable ASCII"}, // Cyrillic а
		{"bch", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6A", "mixes upper and lower case"},
	} {
		err := ValidateAddress(c.ticker, c.addr)
		assert.ErrorIs(t, err, ErrInvalidAddress, "%s %q", c.ticker, c.addr)
		assert.ErrorContains(t, err, c.says, "%s %q", c.ticker, c.addr)
	}
	assert.ErrorIs(t, ValidateAddress("xmr", "4AdUndXHHZ6cfufTMvppY6JwXNouMBzSkbLYfpAV5Usx3skxNgYeYTRj5UzqtReoS44qo9mtmXCqY45DJ852K5Jv2684Rge"), ErrAddressFormatUnknown)
	assert.ErrorIs(t, ValidateAddress("../btc", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"), ErrInvalidTicker)
}

// The client's destination checks refuse an address of the wrong network
// before anything is sent, and let through an address of a coin whose
// format the SDK does not know: the service judges those.
func TestDestinationsAreCheckedForTheirNetwork(t *testing.T) {
	c, api := setupKey(t)
	ctx := context.Background()
	trx := "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
	_, err := c.CreateAddress(ctx, "btc", &CreateOptions{Callback: "https://shop.example/cb", Address: trx})
	assert.ErrorIs(t, err, ErrInvalidAddress)
	assert.ErrorIs(t, err, ErrInvalidOutputs)
	_, err = c.RequestPayment(ctx, "btc", &PaymentRequestOptions{CreateOptions: CreateOptions{Callback: "https://shop.example/cb",
		Outputs: []Output{{Address: btcOut1, Share: mustDec("0.5")}, {Address: trx, Share: mustDec("0.5")}}}, Amount: mustDec("1")})
	assert.ErrorIs(t, err, ErrInvalidAddress)
	_, err = c.CreatePayouts(ctx, "btc", map[string]decimal.Decimal{trx: mustDec("0.1")})
	assert.ErrorIs(t, err, ErrInvalidAddress)
	assert.ErrorIs(t, err, ErrInvalidOption)
	err = c.SendPayouts(ctx, "trc20_usdt", map[string]decimal.Decimal{btcOut1: mustDec("1")})
	assert.ErrorIs(t, err, ErrInvalidAddress)
	assert.Zero(t, api.count(), "nothing was sent")

	// A coin the SDK does not know: any well-formed text goes to the
	// service.
	api.handle("GET /xmr/create/", answerCreate("4AbcdefMonero", "https://shop.example/cb"))
	_, err = c.CreateAddress(ctx, "xmr", &CreateOptions{Callback: "https://shop.example/cb", Address: "4AbcdefMonero"})
	require.NoError(t, err)
	assert.Equal(t, 1, api.count())
	assert.NoError(t, ValidateDestination("xmr", "4AbcdefMonero", nil))
	assert.ErrorIs(t, ValidateDestination("xmr", "4Abc|def", nil), ErrInvalidOutputs, "but never text no address has")

	// Surrounding spaces are trimmed, as the create call trims them.
	assert.NoError(t, ValidateDestination("btc", " "+btcOut1+"\n", nil))
	assert.ErrorIs(t, ValidateDestination("btc", btcOut1[:5]+" "+btcOut1[5:], nil), ErrInvalidAddress)
	assert.ErrorIs(t, ValidateDestination("btc", btcOut1, []Output{{Address: btcOut2, Share: mustDec("1")}}), ErrInvalidOutputs)
	assert.NotErrorIs(t, ValidateDestination("btc", "", []Output{{Address: btcOut1, Share: mustDec("0.5")}}), ErrInvalidAddress,
		"shares not adding up are not an address problem")
	assert.True(t, strings.HasPrefix(btcOut1, "1"))
}
