package fields

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCustom(t *testing.T) {
	q := url.Values{"order_id": {"7"}, "uuid": {"u"}, "Value_Coin": {"1"}, "nonce": {"a", "b"}}
	got := Custom(q)
	assert.Equal(t, url.Values{"order_id": {"7"}, "nonce": {"a", "b"}}, got)
	got["nonce"][0] = "changed"
	assert.Equal(t, "a", q["nonce"][0], "the input is not modified")
}
