package main

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

// shopName is the demo shop's name, shown in its pages.
const shopName = "Fernhill"

//go:embed static
var staticFiles embed.FS

// options build a shop.
type options struct {
	client    *cryptapi.Client
	verifier  *callback.Verifier
	publicURL string // where the service calls back: publicURL + "/callback"
	localURL  string // where the shop listens, on loopback: the admin and the panel answer there only
	// coins are the coins the checkout offers, in this order, and
	// wallets each one's destination: one coin is the shop's only coin
	// (-ticker), several the customer's choice on the payment page.
	coins       []string
	wallets     map[string]string
	products    []product // nil: the catalogue
	deskOptions []invoice.Option
	pageOptions []invoice.PageOption
	log         *slog.Logger // the merchant's log; nil: slog.Default()

	// On the fake service only: the fake and the clock it shares with
	// the desk. They enable the developer panel.
	fake  *cryptapitest.Server
	clock devClock
}

// shop is the demo shop's handler: the store, the payment page, the
// order pages, the admin and, on the fake, the developer panel.
type shop struct {
	opts     options
	products []product
	desk     *invoice.Desk
	orders   *orderBook
	mux      *http.ServeMux
	guard    *guard // the admin's and the developer panel's
	logo     []byte // the shop's mark as a PNG
}

func newShop(o options) (*shop, error) {
	s := &shop{opts: o, products: o.products, orders: newOrderBook(), mux: http.NewServeMux(), logo: logoPNG(96)}
	if s.products == nil {
		s.products = catalogue
	}
	if err := checkCatalogue(s.products); err != nil {
		return nil, err
	}
	desk, err := invoice.New(o.client, invoice.NewMemoryStore(),
		append([]invoice.Option{invoice.WithOnChange(s.onChange), invoice.WithLogger(s.logger())}, o.deskOptions...)...)
	if err != nil {
		return nil, err
	}
	s.desk = desk
	callbacks, err := desk.Handler(o.verifier)
	if err != nil {
		return nil, err
	}
	if s.guard, err = newGuard(o.localURL); err != nil {
		return nil, err
	}
	// The payment page carries the shop's name and mark, and shares the
	// store's colours (the same custom properties, in both stylesheets).
	page := desk.Page(append([]invoice.PageOption{
		invoice.WithMerchantName(shopName),
		invoice.WithLogo(s.logo),
		invoice.WithReturnURL(s.returnURL),
	}, o.pageOptions...)...)

	// The customer's side.
	// The payment page (GET) and the refunds' claim pages (GET, and POST
	// with the customer's address).
	s.mux.Handle("/pay/", http.StripPrefix("/pay", page))
	s.mux.Handle("/callback", callbacks)
	s.mux.HandleFunc("GET /{$}", s.home)
	s.mux.HandleFunc("GET /cart", s.showCart)
	s.mux.HandleFunc("POST /cart/add", s.storeForm(s.addToCart))
	s.mux.HandleFunc("POST /cart/set", s.storeForm(s.setInCart))
	s.mux.HandleFunc("GET /checkout", s.showCheckout)
	s.mux.HandleFunc("POST /checkout", s.storeForm(s.checkout))
	s.mux.HandleFunc("GET /orders/{$}", s.listOrders)
	s.mux.HandleFunc("GET /orders/{token}", s.showOrder)
	s.mux.HandleFunc("POST /orders/{token}/pay", s.storeForm(s.payOrder))
	static, _ := fs.Sub(staticFiles, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static", s.assets(http.FileServerFS(static))))
	s.mux.HandleFunc("GET /favicon.ico", logoIcon(s.logo))
	s.mux.HandleFunc("GET /logo.png", logoIcon(s.logo))

	// The staff's side.
	s.mux.HandleFunc("GET /admin/login", s.adminLogin)
	s.mux.HandleFunc("GET /admin/{$}", s.adminList)
	s.mux.HandleFunc("GET /admin/invoices/{id}", s.adminInvoice)
	s.mux.HandleFunc("POST /admin/invoices/{id}/{action}", s.adminDecide)
	if o.fake != nil {
		s.mux.HandleFunc("GET /dev/{$}", s.panel)
		s.mux.HandleFunc("POST /dev/act", s.act)
	}
	// A form's address opened as a page (a bookmark, a copied link) leads
	// to the page the form is on.
	forms := map[string]string{"/cart/add": "/cart", "/cart/set": "/cart",
		"/orders/{token}/pay": "/orders/{token}", "/admin/invoices/{id}/{action}": "/admin/invoices/{id}"}
	if o.fake != nil {
		forms["/dev/act"] = "/dev/"
	}
	for form, page := range forms {
		s.mux.HandleFunc("GET "+form, func(w http.ResponseWriter, r *http.Request) {
			to := strings.NewReplacer("{token}", url.PathEscape(r.PathValue("token")), "{id}", url.PathEscape(r.PathValue("id"))).Replace(page)
			http.Redirect(w, r, to, http.StatusSeeOther)
		})
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, r, http.StatusNotFound, "This page does not exist",
			"The link may be mistyped or out of date. Everything the shop sells is on its front page.")
	})
	return s, nil
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// onChange hears every change of an invoice, once. The demo keeps its
// orders as they were placed (their invoices say where they stand), so
// it only logs what a shop would act on: a settled invoice is an order
// to pack.
func (s *shop) onChange(ctx context.Context, inv *invoice.Invoice) error {
	s.logger().InfoContext(ctx, "invoice changed", "order", inv.OrderID, "invoice", inv.ID,
		"status", inv.Status, "exception", inv.Exception)
	return nil
}

// returnURL is the payment page's way back, once the invoice is final:
// the order's page.
func (s *shop) returnURL(inv *invoice.Invoice) string {
	if o := s.orders.byNumber(inv.OrderID); o != nil {
		return o.Path()
	}
	return "/"
}

// now is the shop's time: the desk's clock on the fake.
func (s *shop) now() time.Time {
	if s.opts.clock != nil {
		return s.opts.clock.Now()
	}
	return time.Now()
}

func (s *shop) logger() *slog.Logger {
	if s.opts.log != nil {
		return s.opts.log
	}
	return slog.Default()
}

// pageCSP is the policy of the shop's own pages: its stylesheet and
// pictures, forms to itself, no script at all, no framing.
const pageCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// shopHeaders are the shop's own pages' headers. Within the shop the
// browser sends the referrer, and so the real Origin of the shop's own
// form posts (with no-referrer it sends "Origin: null", which the admin
// and the panel refuse); it never goes to other sites.
func shopHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

// assets serves the stylesheet and pictures under the same policy (an
// SVG opened by itself runs nothing), cached for a while.
func (s *shop) assets(files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=300")
		if r.URL.Path == "/" || r.URL.Path[len(r.URL.Path)-1] == '/' {
			s.problem(w, r, http.StatusNotFound, "This page does not exist",
				"The link may be mistyped or out of date. Everything the shop sells is on its front page.")
			return
		}
		files.ServeHTTP(w, r)
	})
}

// storeForm refuses a form of the store posted from another site: the
// cart and order cookies are SameSite=Lax, so such a post would come
// without them anyway; this says so plainly.
func (s *shop) storeForm(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
			s.problem(w, r, http.StatusForbidden, "This form came from another site",
				"For your safety the shop only takes its own forms. Please use the shop's pages.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		if err := r.ParseForm(); err != nil {
			s.problem(w, r, http.StatusBadRequest, "This form could not be read",
				"Please go back and try again.")
			return
		}
		next(w, r)
	}
}
