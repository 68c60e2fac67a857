package cryptapi

import (
	"bytes"
	"reflect"
	"testing"
)

func TestCoinsFastPathTakesTheServiceAnswer(t *testing.T) {
	body := fixture(t, "info_all.json")
	fast, ok := fastCoins(bytes.TrimSpace(body))
	if !ok {
		t.Fatal("the fast path refused the service's all-coins answer")
	}
	plain, err := plainCoins(bytes.TrimSpace(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(fast) != allCoinsRecords() || !reflect.DeepEqual(fast, plain) {
		t.Fatalf("fast %d coins, plain %d, equal %v", len(fast), len(plain), reflect.DeepEqual(fast, plain))
	}
}

// FuzzCoinsFastMatchesPlain checks the one-pass decoding of the all-coins
// answer against the encoding/json one: whenever fastCoins accepts an
// input, plainCoins accepts it too and gives the same Coins.
func FuzzCoinsFastMatchesPlain(f *testing.F) {
	f.Add(fixture(f, "info_all.json"))
	f.Add([]byte(`{"btc":{"coin":"Bitcoin","minimum_transaction":8000,"prices":{"USD":"1.5"}},"trc20":{"usdt":{"coin":"Tether","minimum_transaction_coin":"1e1","prices":[]}},"fee_tiers":[{"a":null}]}`))
	f.Add([]byte(`{"btc":{"COIN":"x","coin":"y"},"status":"success"}`))
	f.Add([]byte(`{"bep20":{"usdt":{"coin":null,"ticker":1.5e3,"prices_updated":"2024-01-02T03:04:05Z"},"x":7},"bep20_usdt":{"coin":"z"}}`))
	f.Add([]byte(`{"ltc":{"coin":"L","prices":null,"fee_percent":null,"logo":"u"},"status":"ERROR"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := fastCoins(data)
		if !ok {
			return
		}
		plain, err := plainCoins(data)
		if err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(fast, plain) {
			t.Fatalf("fast %#v\nplain %#v", fast, plain)
		}
	})
}

// TestCoinFieldsMatchTheWireRecord keeps fastCoins in step with
// coinInfoWire: a field added there must be decoded by the fast path too.
func TestCoinFieldsMatchTheWireRecord(t *testing.T) {
	typ := reflect.TypeOf(coinInfoWire{})
	if typ.NumField() != len(coinFields) {
		t.Fatalf("coinInfoWire has %d fields, coinFields %d", typ.NumField(), len(coinFields))
	}
	for i := 0; i < typ.NumField(); i++ {
		if tag := typ.Field(i).Tag.Get("json"); tag != coinFields[i] {
			t.Errorf("field %d: json tag %q, coinFields %q", i, tag, coinFields[i])
		}
	}
}
