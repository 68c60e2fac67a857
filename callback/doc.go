// Package callback receives the service's callbacks safely: it verifies
// their signatures, parses them into typed values, de-duplicates them, and
// answers "*ok*" only once the merchant's code has recorded a payment.
//
// The service signs every callback (header x-ca-signature, RSA PKCS#1 v1.5
// over SHA-256): for GET callbacks the full URL it called, for POST
// callbacks the raw body. It delivers at least once, retrying until it gets
// HTTP 200 with the body "*ok*", and when the address was created with
// pending=1 it sends each payment twice under one uuid: pending, then
// confirmed.
//
// A Verifier checks signatures with the published key (PublishedKey),
// pinned by default, or with keys the merchant pins or fetches
// (WithKeySource). It cannot be configured to let an unsigned callback
// through; ParseUnverified is the loudly named way to skip verification, in
// tests. GET callbacks need WithPublicURL: the signed URL is rebuilt from
// that base and the raw request target, never from Host or X-Forwarded-*.
//
// A signature is accepted only for the shape it was made for: a POST body
// must be a well-formed callback body of its shape (form or JSON, in
// agreement with its Content-Type, keys that are field names, and every
// field each callback carries), so a captured GET URL replayed as a POST
// body is refused.
//
// NewHandler ties it together, and requires an address check: a signed
// callback proves the service sent it, not that the merchant created the
// address (anyone can create one with the merchant's callback URL, and the
// query of a POST callback is not signed):
//
//	v, err := callback.NewVerifier(callback.WithPublicURL("https://shop.example"))
//	if err != nil {
//		log.Fatal(err)
//	}
//	h, err := callback.NewHandler(v,
//		func(ctx context.Context, p *callback.Payment) error {
//			if p.Pending {
//				return nil // seen, not yet confirmed
//			}
//			return orders.MarkPaid(ctx, p.AddressIn, p.ValueCoin)
//		},
//		callback.WithAddressCheck(orders.KnowsAddress),
//	)
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/callback", h)
//
// The function is called once per payment and callback type (PaymentKey,
// built from the uuid alone, so one payment has one key however it
// arrives),
// even when the service delivers a callback many times at once; an error
// makes the handler answer 500 so that the service delivers it again. The
// default MemoryStore suits one server; servers sharing a callback URL
// share a Store. Process runs a payment through the same store logic for
// payments obtained by other means.
//
// Checkout payment and deposit notifications are verified and parsed with
// Verifier.CheckoutIPN and Verifier.DepositIPN; answer them with WriteOK.
package callback
