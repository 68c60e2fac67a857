package cryptapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzPayoutDecode feeds the payout answers' decoders: they never panic,
// and a decoded payout keeps its state in lower case and its ids as text.
func FuzzPayoutDecode(f *testing.F) {
	for _, s := range []string{
		payoutInfoNumeric, payoutInfoText,
		`{"status":"success","payouts":[{"id":2460,"status":"Done","total_fiat":""}],"num_pages":"3"}`,
		`{"status":"success","requests":[{"id":1e3,"value":"1e-18","status":"PENDING"}],"num_pages":1}`,
		`{"payout_requests":[{"amount":99999999999999999999999999}]}`,
		`{"request_ids":["42d5245e",18446744073709551617,null]}`,
		`{"payout_info":{"requests":[],"blockchain_fee":null,"timestamp":"31/02/2024 25:61:61"}}`,
		`{"balance":"0E-8"}`, `{"address":12}`, `null`, `[]`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a payoutInfoAnswer
		if json.Unmarshal(b, &a) == nil && a.PayoutInfo != nil {
			if st := string(a.PayoutInfo.Status); st != strings.ToLower(st) {
				t.Fatalf("state %q not lower case", st)
			}
			if a.PayoutInfo.Requests == nil {
				t.Fatal("nil requests map")
			}
		}
		var l payoutPage
		_ = json.Unmarshal(b, &l)
		var rl payoutRequestPage
		if json.Unmarshal(b, &rl) == nil {
			for _, r := range rl.Requests {
				if r.Status != strings.ToLower(r.Status) {
					t.Fatalf("request state %q not lower case", r.Status)
				}
			}
		}
		var pr PayoutRequests
		_ = json.Unmarshal(b, &pr)
		var bal balanceAnswer
		_ = json.Unmarshal(b, &bal)
		var w PayoutWallet
		_ = json.Unmarshal(b, &w)
	})
}

// FuzzHostedLogsDecode feeds the checkout and deposit logs and fee tier
// decoders: they never panic, and transaction lists hold no empty hash.
func FuzzHostedLogsDecode(f *testing.F) {
	for _, name := range []string{"checkout_logs.json", "checkout_logs_published.json", "checkout_logs_published_text.json", "deposit_logs.json", "deposit_logs_empty.json", "info_all.json"} {
		f.Add(fixture(f, name))
	}
	for _, s := range []string{
		`{"is_paid":"pending","is_partial":2,"payment_data":[{"txid":"a, ,b"}]}`,
		`{"txid":[1,"a,b",null],"payment_data":null}`, `{"deposits":[{"txid":[""]}],"total_deposited":"1e999"}`,
		`{"fee_tiers":{"x":{"minimum":"1","fee":"2"}}}`, `{"fee_tiers":[{"fee_percent":null,"fee":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c CheckoutLogs
		if json.Unmarshal(b, &c) == nil {
			for _, id := range c.TxIDs {
				if strings.TrimSpace(id) == "" || strings.Contains(id, ",") {
					t.Fatalf("bad txid %q", id)
				}
			}
			_ = c.Paid()
		}
		var d DepositLogs
		if json.Unmarshal(b, &d) == nil {
			for _, e := range d.Deposits {
				for _, id := range e.TxIDs {
					if strings.TrimSpace(id) == "" {
						t.Fatal("empty txid")
					}
				}
			}
		}
		var ft feeTiersAnswer
		if json.Unmarshal(b, &ft) == nil {
			for i := 1; i < len(ft.FeeTiers); i++ {
				if ft.FeeTiers[i].Minimum.LessThan(ft.FeeTiers[i-1].Minimum) {
					t.Fatal("tiers out of order")
				}
			}
		}
	})
}
