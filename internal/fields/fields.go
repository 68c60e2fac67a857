// Package fields knows the names of the fields the service sends in a
// payment callback, and so which query parameters of a callback URL are the
// merchant's own. The client refuses custom parameters with these names,
// and the callback package and Reconcile separate custom data with it.
package fields

import (
	"net/url"
	"strings"
)

// callback holds the payment callback fields of the specification, the
// deprecated ones, and the logs' per-payment names a callback could carry.
var callback = map[string]bool{
	"uuid": true, "address_in": true, "address_out": true, "txid_in": true,
	"txid_out": true, "confirmations": true, "value": true, "value_coin": true,
	"value_forwarded": true, "value_forwarded_coin": true, "fee": true,
	"fee_coin": true, "fee_percent": true, "coin": true, "price": true,
	"pending": true, "value_coin_convert": true,
	"value_forwarded_coin_convert": true, "result": true,
}

// IsCallback reports whether name (in any case) is a field the service
// sends in payment callbacks.
func IsCallback(name string) bool { return callback[strings.ToLower(name)] }

// Custom returns the parameters of q that are not callback fields: the
// merchant's own data. q is not modified.
func Custom(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		if !IsCallback(k) {
			out[k] = append([]string(nil), vs...)
		}
	}
	return out
}

// Names returns a copy of the set of callback field names, lower case.
func Names() map[string]bool {
	out := make(map[string]bool, len(callback))
	for k := range callback {
		out[k] = true
	}
	return out
}
