// Package cryptapitest is an in-process, stateful fake of the payment
// forwarding service, in the spirit of net/http/httptest: a merchant's
// tests (and this SDK's) run a payment end to end, from address creation
// to the signed confirmed callback, with no network.
//
// NewServer starts the fake on a random port of 127.0.0.1, or on the
// listener given with WithListener (a fixed address, for instance). It
// answers every operation of the service (create, logs, info, QR code,
// convert, estimate, public key, checkout payments and deposits, payouts)
// on the real paths with the real shapes and quirks, and keeps what
// happens: addresses bound to callback URLs, payments, forwarding
// transactions, callback deliveries and their retries, payouts. Test code
// plays the customer and the blockchain with Pay and Confirm, pays hosted
// pages with PayCheckout and PayDeposit, and waits for deliveries with
// Flush. Handler returns the fake's http.Handler, to serve it from an
// HTTP server of one's own, next to other routes; hosted payment pages
// then point where the client reached it.
//
//	srv := cryptapitest.NewServer()
//	defer srv.Close()
//	client, _ := cryptapi.New(cryptapi.WithBaseURL(srv.URL()))
//	addr, _ := client.CreateAddress(ctx, "btc", &cryptapi.CreateOptions{
//		Callback: shop.URL + "/paid?order=42",
//		Address:  "bc1qmerchant...",
//		Pending:  true,
//	})
//	txid, _ := srv.Pay("btc", addr.AddressIn, decimal.RequireFromString("0.01"))
//	_ = srv.Flush(ctx) // the pending callback has reached the shop
//	_ = srv.Confirm(txid, 1)
//	_ = srv.Flush(ctx) // forwarded, and the confirmed callback delivered
//	logs, _ := client.Logs(ctx, "btc", addr.CallbackURL)
//	fmt.Println(logs.Callbacks[0].Result) // "done" if the shop answered *ok*
//
// # Forms
//
// Without options the server is the keyless form: no API key,
// address required on create, and checkout, deposit and payout answer an
// error. WithAPIKey makes it the API-key form, as that service's
// own libraries see it: every operation requires that apikey except the
// public reads (coin info, all coins, QR code, both convert forms,
// estimate, /pubkey/), which answer without a key (a wrong key is still
// refused); create may omit address (the payment is then forwarded to a
// per-coin "dashboard" address the server generates).
//
// # Payouts
//
// In the API-key form each coin has a payout wallet (PayoutWallet), funded
// by FundPayoutWallet or by a Pay to its address. Bulk requests record
// payout requests ("pending"); /payout/create/ makes a payout of them
// ("Created"); /payout/process/, or the bulk operation with processing,
// sends it: "Processing" with the wallet debited by the total and the fee,
// then "Done" with a transaction hash once the server's clock has moved
// PayoutSettleTime on, or "Error" at once when the balance is short (its
// requests are then "rejected"). Listings are paginated by 50, newest
// first. PayoutBatches shows the payouts.
//
// # Checkout
//
// PayCheckout with less than the order value is a partial payment (the
// logs show is_partial, the IPN says is_paid=0); further payments add up
// until the value is covered. A payment past its expire_at is expired.
// IPNs carry payment_id, paid_amount_fiat, received_amount,
// received_amount_fiat and type.
//
// # Payments
//
// A payment below the address's minimum (the coin's minimum transaction ×
// (1 + (N−1)/3) for N destinations) is ignored as by the real service: Pay
// returns ErrBelowMinimum, no callback is sent, nothing is forwarded and
// the logs show nothing for it. Otherwise, with pending=1 a pending
// callback is queued at once; when Confirm reaches the address's
// confirmations, the value minus the fee (fee_percent, at least the
// coin's minimum fee) is forwarded, split by shares (the last destination
// takes the rounding remainder), and the confirmed callback is queued.
//
// # Deliveries
//
// Callbacks and IPNs are signed like the real ones: the x-ca-signature
// header is base64 of an RSA PKCS #1 v1.5 SHA-256 signature, over the full
// URL for GET and over the raw body for POST, with the server's own
// 1024-bit key (PublicKey, also served at /pubkey/). Custom query
// parameters of the callback URL stay in the query string in every case.
// Go's crypto/rsa refuses only keys below 1024 bits, so no GODEBUG
// setting is needed to make or verify these signatures.
//
// A delivery counts as acknowledged when the merchant answers HTTP 200
// with the body "*ok*" (surrounding white space ignored); the payment is
// then "done". Anything else (another body or status, a refused
// connection, a time-out, see WithDeliveryTimeout) leaves it "sent" and
// schedules a retry after the next wait of the retry schedule
// (WithRetrySchedule); after the last wait the server gives up. Deliveries
// of one payment go out in order: the pending callback before the
// confirmed one, and a pending callback is not retried once the payment
// is confirmed.
//
// A background goroutine performs the deliveries. Flush waits until every
// delivery due at the server's current time has been attempted. With a
// FakeClock (WithClock), nothing becomes due by itself: advance the clock,
// then Flush, to run retries deterministically. Close stops every
// goroutine the server started.
//
// Deliveries, Requests, Payments and Payouts show what happened, for
// assertions. WithDeliveryHook reports each delivery attempt as it is
// recorded, from the delivery goroutine and without the server's lock;
// Flush and Close wait for the hook, which must therefore return
// promptly and must not call them.
//
// # Deviations from the real service
//
// The fake checks address formats, not checksums. Prices move only when
// SetPrice moves them.
// Settings of a create call other than the destination (pending, post,
// json, convert, confirmations, priority) are also fixed by the first
// create for a callback URL. The logs of an unknown callback URL answer
// {"status":"error","error":"No request or no payment callbacks found"}
// with HTTP 200 (the service answers some failures with 200; other
// failures here use 400, 401, 404 or 405); a known address without
// payments answers success with "callbacks": [], as the published samples
// show. Info records carry the ticker in "trc20_usdt" form, also under a
// network in the all-coins answer, and a logo URL. A callback URL with
// characters outside ASCII is escaped before it is sent and signed. The
// shapes of a deposit log entry, the deposit IPN, the payout request list
// and the hosted page are not published by the service; the fake's are
// plausible, not authoritative. An unknown path, such as the /{ticker}/payout/
// of old libraries, answers HTTP 404 {"status":"error","error":"Not found"}.
package cryptapitest
