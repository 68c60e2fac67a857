package main

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/forwardpay/cryptapi-go/invoice"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages holds one template per page, each the layout with the page's
// "content".
var pages = parsePages()

func parsePages() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		if base := path.Base(name); base != "layout.html" {
			out[base] = template.Must(template.Must(layout.Clone()).ParseFS(templateFiles, name))
		}
	}
	return out
}

// view is what the layout is executed with: the page's own data in Data.
type view struct {
	Title     string
	Shop      string
	Nav       string // the header's current link: shop, cart, orders, admin or dev
	Staff     bool   // the admin's and the panel's header
	CartCount int
	HasOrders bool
	Demo      bool   // on the fake: the notice that payments are simulated
	AdminLink string // on the fake, at a loopback address: the admin's sign-in link
	Panel     bool   // the developer panel exists
	Data      any
}

// navOf is the header link each page belongs to.
var navOf = map[string]string{
	"home.html": "shop", "cart.html": "cart", "checkout.html": "cart",
	"orders.html": "orders", "order.html": "orders",
	"admin_list.html": "admin", "admin_invoice.html": "admin", "panel.html": "dev",
}

// page renders a page of the store.
func (s *shop) page(w http.ResponseWriter, r *http.Request, name, title string, data any) {
	s.render(w, r, http.StatusOK, name, title, data)
}

// render renders page name with status; the staff's pages (the admin,
// the panel) get the staff's header.
func (s *shop) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	v := view{
		Title: title, Shop: shopName, Nav: navOf[name], Data: data,
		Staff: staffPath(r.URL.Path), Demo: s.opts.fake != nil, Panel: s.opts.fake != nil,
	}
	if !v.Staff {
		v.CartCount = s.cartOf(r).Count()
		v.HasOrders = len(ordersOf(r)) > 0
		if v.Demo && s.guard.hostOK(r.Host) {
			v.AdminLink = s.guard.loginPath()
		}
	}
	var b bytes.Buffer
	t, ok := pages[name]
	if !ok {
		s.logger().Error("rendering a page", "page", name, "error", "no such template")
		http.Error(w, "Sorry, this page could not be shown.", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&b, "layout", v); err != nil {
		s.logger().Error("rendering a page", "page", name, "error", err)
		http.Error(w, "Sorry, this page could not be shown.", http.StatusInternalServerError)
		return
	}
	shopHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// staffPath reports whether a path is the admin's or the panel's.
func staffPath(p string) bool {
	return p == "/admin" || strings.HasPrefix(p, "/admin/") || p == "/dev" || strings.HasPrefix(p, "/dev/")
}

// problem tells the reader, in words, what went wrong and what to do.
func (s *shop) problem(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	s.render(w, r, status, "problem.html", title, struct{ Title, Message string }{title, message})
}

// unavailable is the answer when the shop's own store or the service
// fails: the customer is asked to try again, the merchant's log has why.
func (s *shop) unavailable(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.logger().ErrorContext(r.Context(), what+": unavailable", "error", err)
	s.problem(w, r, http.StatusServiceUnavailable, "This page is not available right now",
		"Please try again in a moment.")
}

// pill is a status as a coloured label.
type pill struct{ Text, Tone string }

var statusPills = map[invoice.Status]pill{
	invoice.StatusNew:        {"Open", ""},
	invoice.StatusProcessing: {"Confirming", "warn"},
	invoice.StatusSettled:    {"Settled", "ok"},
	invoice.StatusExpired:    {"Expired", "bad"},
	invoice.StatusInvalid:    {"Cancelled", "plain"},
}

// customerPills are the statuses as the customer reads them.
var customerPills = map[invoice.Status]pill{
	invoice.StatusNew:        {"Awaiting payment", ""},
	invoice.StatusProcessing: {"Confirming", "warn"},
	invoice.StatusSettled:    {"Paid", "ok"},
	invoice.StatusExpired:    {"Expired", "bad"},
	invoice.StatusInvalid:    {"Cancelled", "plain"},
}

var exceptionWords = map[invoice.Exception]string{
	invoice.ExceptionMarked:      "Settled by hand",
	invoice.ExceptionWrongCoin:   "Wrong coin",
	invoice.ExceptionPaidLate:    "Paid late",
	invoice.ExceptionPaidOver:    "Overpaid",
	invoice.ExceptionPaidPartial: "Partly paid",
}

var eventWords = map[string]string{
	invoice.EventCreated:          "Created",
	invoice.EventPaymentSeen:      "Payment seen",
	invoice.EventPaymentConfirmed: "Payment confirmed",
	invoice.EventRequoted:         "New quote",
	invoice.EventExpired:          "Expired",
	invoice.EventMarked:           "Marked as settled",
	invoice.EventReopened:         "Reopened",
	invoice.EventInvalidated:      "Cancelled",
	invoice.EventCoinChosen:       "Coin chosen",
	invoice.EventRefundCreated:    "Refund created",
	invoice.EventRefundAddress:    "Refund address set",
	invoice.EventRefundSending:    "Refund sending",
	invoice.EventRefundSent:       "Refund sent",
	invoice.EventRefundFailed:     "Refund failed",
	invoice.EventRefundCancelled:  "Refund cancelled",
}

// refundPills are a refund's statuses as the staff read them.
var refundPills = map[invoice.RefundStatus]pill{
	invoice.RefundAwaitingAddress: {"Awaiting address", ""},
	invoice.RefundReady:           {"Ready to send", "warn"},
	invoice.RefundSending:         {"Sending", "warn"},
	invoice.RefundSent:            {"Sent", "ok"},
	invoice.RefundFailed:          {"Failed", "bad"},
	invoice.RefundCancelled:       {"Cancelled", "plain"},
}

// word returns m's word for k, or k itself for one it does not know.
func word[K ~string](m map[K]string, k K) string {
	if w, ok := m[k]; ok {
		return w
	}
	return string(k)
}

var funcs = template.FuncMap{
	// usd writes a price of the store: "$12.50".
	"usd": func(d decimal.Decimal) string { return "$" + d.StringFixed(2) },
	// fiat writes an amount in an invoice's currency: "25.00 USD".
	"fiat": func(d decimal.Decimal, currency string) string {
		if currency == "" {
			return d.String()
		}
		return d.StringFixed(2) + " " + currency
	},
	// coin writes an amount in a coin: "12.5 USDT".
	"coin": func(d decimal.Decimal, ticker string) string { return d.String() + " " + symbol(ticker) },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2 Jan 2006, 15:04 UTC")
	},
	// short is when for a narrow column: "23 Nov, 12:04".
	"short":     func(t time.Time) string { return t.UTC().Format("2 Jan, 15:04") },
	"iso":       func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"status":    func(st invoice.Status) pill { return statusPills[st] },
	"paystate":  func(st invoice.Status) pill { return customerPills[st] },
	"exception": func(x invoice.Exception) string { return word(exceptionWords, x) },
	"refundState": func(st invoice.RefundStatus) pill {
		if p, ok := refundPills[st]; ok {
			return p
		}
		return pill{string(st), "plain"}
	},
	"event":    func(kind string) string { return word(eventWords, kind) },
	"coinName": coinName,
	"symbol":   symbol,
	"received": received,
	// badge is the letter drawn for a coin, as the payment page draws it.
	"badge": func(ticker string) string {
		switch sym := symbol(ticker); sym {
		case "ETH":
			return "Ξ"
		case "LTC":
			return "Ł"
		case "USDT":
			return "₮"
		case "":
			return "?"
		default:
			return sym[:1]
		}
	},
}

// coinName is how customers read a ticker: "eth" is ETH, "trc20_usdt"
// (or "trc20/usdt") is USDT (TRC20).
func coinName(ticker string) string {
	network, token, ok := strings.Cut(strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(ticker), "/", "_")), "_")
	if !ok {
		return network
	}
	return token + " (" + network + ")"
}

// symbol is the coin's short name: "eth" is ETH, "trc20_usdt" is USDT.
func symbol(ticker string) string {
	t := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(ticker), "/", "_"))
	if _, token, ok := strings.Cut(t, "_"); ok {
		return token
	}
	return t
}
