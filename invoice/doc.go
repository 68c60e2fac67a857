// Package invoice takes an order from a price to a settled payment on top
// of the forwarding service, and runs its whole life with nobody
// watching: partial payments, top-ups below the coin's minimum, re-quotes
// while the customer hesitates, expiry, payments after expiry or in
// another token, dropped transactions, overpayments, and the merchant's
// own decisions (settle by hand, reopen, cancel). Every payment is kept,
// and the books add up.
//
// A Desk creates invoices (Create), lets the customer choose their coin
// (Choose), receives their callbacks (Handler),
// recovers callbacks that never arrived (Reconcile), applies the clock
// (Tick, or Run on every replica), finds invoices (Get, List, ByOrderID),
// resolves what the rules cannot (MarkSettled, Reopen, Invalidate) and
// writes the books (ExportCSV). The state of each invoice lives in one
// Store (NewMemoryStore for one process, invoice/pgstore for several
// replicas), and every change is computed by one pure function from the
// stored invoice and one event (a payment seen, a confirmation, a new
// quote, the clock, the merchant's decision), recorded in the invoice's
// Events, stored, then passed to the merchant's onChange, once per
// change.
//
//	desk, _ := invoice.New(client, invoice.NewMemoryStore(),
//		invoice.WithOnChange(func(ctx context.Context, inv *invoice.Invoice) error {
//			return orders.Update(ctx, inv.OrderID, inv.Status, inv.Exception, inv.Paid)
//		}))
//	inv, err := desk.Create(ctx, &invoice.CreateOptions{
//		OrderID: "1001", Ticker: "btc", Price: decimal.RequireFromString("25"), Currency: "USD",
//		Callback: "https://shop.example/invoices/callback", Address: "bc1q...your wallet",
//		Tolerance: decimal.RequireFromString("0.01"),
//	})
//	// Show inv.Due (in the coin), inv.DueFiat, inv.Minimum, inv.PaymentURI, inv.ExpiresAt.
//	callbacks, err := desk.Handler(verifier) // a verifier WithPublicURL
//	http.Handle("/invoices/callback", callbacks)
//	go desk.Run(ctx, 10*time.Second) // expiry and new quotes, with nobody watching
//
// # Rules
//
//   - Creation goes through cryptapi.Client.RequestPayment (the coin's
//     minimum for the number of destinations is checked before an address
//     exists), with pending callbacks on, and a callback URL that carries
//     the invoice's ID and a random nonce only this invoice knows. Every
//     option is checked before anything is sent or stored.
//   - One open invoice per order: a Create repeated with the same options
//     returns the order's open invoice and asks the service for nothing;
//     with other options it fails (ErrOrderOpen); Creates racing for an
//     order, on any number of replicas, make one invoice.
//   - A callback reaches an invoice only through that ID, its nonce and
//     its own (signed) address_in; anything else is refused with 403 and
//     touches no invoice. Each (payment uuid, pending/confirmed) is applied
//     once, through the callback package's de-duplication; a pending
//     payment later confirmed counts once.
//   - Paid in full: when confirmed payments reach Price at the quotes in
//     force, within Tolerance, the invoice is StatusSettled; when seen
//     payments do but some are unconfirmed, StatusProcessing.
//   - Partial payments: ExceptionPaidPartial, Due is the whole remainder
//     (tolerance decides when an invoice is paid, not how much is asked),
//     with a new PaymentURI. A remainder below the coin's minimum is asked
//     as the minimum (a smaller top-up would be lost), and paying exactly
//     that settles with no exception.
//   - Re-quotes: a quote lasts QuoteTTL. When it lapses with nothing in
//     flight, Tick converts the unpaid fiat remainder at the coin's new
//     price (read once for every invoice of the coin, and not again for a
//     while when the service fails); payments received keep the quote in
//     force when they were first seen.
//   - Expiry: after ExpiresIn without full payment the invoice is
//     StatusExpired; a processing invoice whose payments are not confirmed
//     within MonitorFor after that (a dropped transaction) expires too.
//     Money that arrives or confirms on an expired or invalid invoice is
//     recorded as ExceptionPaidLate, the status stays and Paid includes it.
//   - The customer's coin: with CreateOptions.Tickers (and each coin's
//     destination in Destinations), the invoice offers several coins and
//     starts without an address; the customer chooses one on the payment
//     page (or the shop calls Choose), and the address is created then,
//     for that coin only. The customer may switch coin while the invoice
//     waits for payment: a new address for a new coin, the same one for a
//     coin chosen before, at most MaxChoices choices. Payments to the
//     address of any coin chosen count toward the price, each at its
//     coin's quote in force when first seen (every offered coin is
//     quoted at once); Paid counts the coin chosen last, PaidFiat all.
//     Choices racing on any number of replicas make one address per coin.
//   - ExceptionPaidOver records the excess (Excess); a payment in another
//     coin (possible with MultiToken) is ExceptionWrongCoin, recorded and
//     never counted at face value.
//   - The merchant decides what the rules cannot: MarkSettled
//     (ExceptionMarked), Reopen (the rest of an expired invoice at a fresh
//     quote), Invalidate; each with its reason in Events.
//   - Refunds give money back in the coin paid, to an address the customer
//     gives on the claim page: Refund (RefundOverpaid, RefundAll or
//     RefundCustom, at RateThen or RateNow), SetRefundAddress (checked for
//     the coin's network), SendRefund (API-key form: one payout from the
//     payout wallet, at most once) or MarkRefundSent (sent by the
//     merchant), CancelRefund. The refunds that count never add up to more
//     than the confirmed payments in their coin (each coin the customer
//     chose counted on its own, whichever address it paid), decided under
//     the store's lock. A refunded invoice is not reopened or marked
//     settled.
//   - onChange is called once per change, in order, after it is stored;
//     an error from it means the callback is not acknowledged, and the
//     change is offered again, by the service's next delivery and by Tick
//     (as it is if the process dies before onChange's success is recorded:
//     with invoice/pgstore, write your effects through pgstore.Tx to have
//     them exactly once).
//   - Reads are reads: Get, List, ByOrderID and the payment page never
//     write and never call onChange. What time changes is stored by Tick;
//     Invoice.AsOf shows an invoice as the clock makes it now.
//   - Amounts are exact decimals at the coin's precision; there is no
//     float anywhere.
//
// # For a payment page
//
// An Invoice carries what a customer's page shows: Due in the coin and
// DueFiat, Minimum ("send at least …; less is lost"), CoinName and
// Network, the progress (PaidFiat, PaidPendingFiat, Remaining), the quote
// and invoice deadlines (QuoteExpiresAt, ExpiresAt), and Status and
// Exception. Its ID, 130 random bits, is what a page URL may name; the
// OrderID never should. Show it through AsOf(now), so that a deadline
// that passed never asks for payment, and run Tick, which renews quotes.
//
// Desk.Page is such a page, ready to mount: the shop's name and logo,
// what is bought, the total, the status and the time left, the amount,
// one QR code and the address on one phone screen; a printable receipt
// once paid; "do not send" once expired. For an invoice with Coins it
// first lists the coins, as a plain form, and lets the customer switch. It speaks eleven languages
// (PageStringsFor), chosen from the browser's Accept-Language or its
// switch, and follows the screen's light or dark scheme. It is
// server-rendered, updates itself with JavaScript (an unchanged status is
// a 304), works without it, runs under a strict Content-Security-Policy,
// and is restyled or translated with PageOptions.
package invoice
