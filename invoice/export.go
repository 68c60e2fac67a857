package invoice

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// CSVHeader is the header row ExportCSV writes, its columns in order.
var CSVHeader = []string{
	"invoice_id", "order_id", "created_at", "status", "exception", "price", "currency", "ticker",
	"payment_uuid", "txid_in", "txid_out", "amount", "fiat_value", "rate", "quoted_at", "fee", "forwarded", "confirmed",
}

// ExportCSV writes the books of the invoices o selects (nil: all; see
// List) to w as CSV (RFC 4180): CSVHeader, then one row per payment, and
// one row per invoice without payments, newest invoice first, its
// payments in the order they were first seen. It reads the invoices in
// pages, so that memory stays bounded whatever their number, and never
// writes to the store.
//
// Per row: the invoice's ID, OrderID, CreatedAt, Status, Exception and
// Price in currency (the invoice's Currency, or its ticker for a price in
// the coin); the payment's coin (ticker: the invoice's for an invoice
// without payments), uuid, transactions, amount (in its coin), fiat_value
// and rate (in currency, at the quote of quoted_at; empty for a payment in
// another coin, which is not valued), fee and forwarded (in the coin, from
// the confirmed callback; empty where the service did not report them) and
// whether it is confirmed. Times are RFC 3339 in UTC, amounts exact
// decimals, never in exponent form.
//
// Refunds that left or are leaving the payout wallet or the merchant's
// wallet (sent, or sending) follow the payments, one row each, oldest
// first, as negative amounts: payment_uuid is the refund's ID, txid_out
// its transaction, amount minus what it gave back (in its ticker),
// fiat_value and rate minus its value at the price a RateNow refund was
// converted at (empty otherwise), quoted_at when it was created (for
// RateNow), confirmed whether it is sent. The confirmed rows of an
// invoice in its own ticker add up to its Paid less its Refunded, and the
// confirmed payments' fiat_value (in every coin the customer chose) to its
// PaidFiat.
func (d *Desk) ExportCSV(ctx context.Context, w io.Writer, o *ListOptions) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("invoice: export: %w", err)
	}
	for inv, err := range d.List(ctx, o) {
		if err != nil {
			return fmt.Errorf("invoice: export: %w", err)
		}
		for _, row := range csvRows(inv) {
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("invoice: export: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("invoice: export: %w", err)
	}
	return nil
}

// csvRows are an invoice's rows of ExportCSV.
func csvRows(inv *Invoice) [][]string {
	currency := inv.Currency
	if currency == "" {
		currency = inv.Ticker
	}
	head := []string{inv.ID, inv.OrderID, csvTime(inv.CreatedAt), string(inv.Status), string(inv.Exception),
		inv.Price.String(), currency}
	if len(inv.Payments) == 0 {
		return [][]string{append(head, inv.Ticker, "", "", "", "", "", "", "", "", "", "")}
	}
	rows := make([][]string, 0, len(inv.Payments)+len(inv.Refunds))
	for _, rc := range inv.Payments {
		fiat, rate := "", ""
		if !rc.WrongCoin {
			fiat, rate = rc.FiatValue.String(), rc.Rate.String()
		}
		rows = append(rows, append(append([]string(nil), head...),
			rc.Coin, rc.UUID, rc.TxID, rc.TxIDOut, rc.Amount.String(), fiat, rate, csvTime(rc.QuotedAt),
			csvAmount(rc.Fee), csvAmount(rc.Forwarded), strconv.FormatBool(rc.Confirmed)))
	}
	for _, rf := range inv.Refunds {
		if rf.Status != RefundSent && rf.Status != RefundSending {
			continue
		}
		fiat, rate, quoted := "", "", ""
		if rf.Quote.IsPositive() {
			fiat, rate, quoted = rf.FiatValue.Neg().String(), rf.Quote.String(), csvTime(rf.CreatedAt)
		}
		rows = append(rows, append(append([]string(nil), head...),
			rf.Ticker, rf.ID, "", rf.TxID, rf.Amount.Neg().String(), fiat, rate, quoted, "", "",
			strconv.FormatBool(rf.Status == RefundSent)))
	}
	return rows
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func csvAmount(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}
