package invoice

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	qrcode "github.com/skip2/go-qrcode"
)

//go:embed pageassets/page.html pageassets/page.css pageassets/page.js
var pageAssets embed.FS

// Paths the page handler serves, relative to where it is mounted. An
// invoice's page is at "<ID>", its status at "<ID>/status" and its QR codes
// at "<ID>/qr.png" (with the amount due) and "<ID>/qr-address.png" (the
// address alone, for wallets that refuse an amount). Every link in the page
// is relative, so the handler works under any prefix removed with
// http.StripPrefix.
const (
	// PageStatusPath follows "<ID>/" for the status JSON (a PageView).
	PageStatusPath = "status"
	// PageQRPath follows "<ID>/" for the QR code of the payment URI.
	PageQRPath = "qr.png"
	// PageQRAddressPath follows "<ID>/" for the QR code of the address
	// without amount.
	PageQRAddressPath = "qr-address.png"
	// PageAssetsPath holds the stylesheet (page.css) and script (page.js).
	PageAssetsPath = "_/"
)

// DefaultPollInterval is how often an open page asks for its status.
const DefaultPollInterval = 2 * time.Second

// PageStrings are the texts of the payment page, for translation. In
// WithPageStrings, an empty field keeps the default (DefaultPageStrings).
// Some texts take values, written {amount}, {symbol}, {address},
// {currency} and {min} where they go.
type PageStrings struct {
	Lang           string // the page's language, for <html lang>
	Title          string
	SendHeading    string
	AmountLabel    string
	FiatLabel      string // "≈ {amount} {currency}"
	CoinLabel      string
	NetworkLabel   string
	AddressLabel   string
	CopyAmount     string
	CopyAddress    string
	Copied         string
	MinimumNote    string // "Send at least {min} {symbol}; less is lost."
	QRWithAmount   string
	QRAddressOnly  string
	QRAlt          string // alt text of the QR code with amount
	QRAddressAlt   string // alt text of the QR code without amount
	OpenWallet     string
	QuoteLeft      string
	ExpiryLeft     string
	PaidLabel      string
	PendingLabel   string
	RemainingLabel string
	ProgressLabel  string
	Return         string
	Refresh        string
	NoScript       string

	New, NewPartial, Processing, Settled, Expired, Invalid string // headlines by status
	WrongCoin, PaidLate, PaidOver, ExpiredPartial          string // details by exception
}

// DefaultPageStrings returns the page's English texts.
func DefaultPageStrings() PageStrings {
	return PageStrings{
		Lang:           "en",
		Title:          "Payment",
		SendHeading:    "Send this payment",
		AmountLabel:    "Amount",
		FiatLabel:      "≈ {amount} {currency}",
		CoinLabel:      "Coin",
		NetworkLabel:   "Network",
		AddressLabel:   "Address",
		CopyAmount:     "Copy amount",
		CopyAddress:    "Copy address",
		Copied:         "Copied",
		MinimumNote:    "Send at least {min} {symbol}; less is lost.",
		QRWithAmount:   "With amount",
		QRAddressOnly:  "Address only (if your wallet refuses the amount)",
		QRAlt:          "QR code: pay {amount} {symbol} to {address}",
		QRAddressAlt:   "QR code of the address {address}, without amount",
		OpenWallet:     "Open in wallet",
		QuoteLeft:      "Amount valid for",
		ExpiryLeft:     "Invoice expires in",
		PaidLabel:      "Received",
		PendingLabel:   "Awaiting confirmation",
		RemainingLabel: "Remaining",
		ProgressLabel:  "Paid so far",
		Return:         "Back to the shop",
		Refresh:        "Refresh",
		NoScript:       "This page does not update by itself without JavaScript: reload it to see the current state.",

		New:            "Waiting for your payment",
		NewPartial:     "Partly paid: please send the remainder",
		Processing:     "Payment received, waiting for confirmation",
		Settled:        "Paid in full. Thank you!",
		Expired:        "This invoice has expired",
		Invalid:        "This invoice was cancelled",
		WrongCoin:      "A payment arrived in another coin than asked; the shop will contact you.",
		PaidLate:       "A payment arrived after the invoice ended; the shop will contact you.",
		PaidOver:       "You sent more than asked; the shop will contact you about the excess.",
		ExpiredPartial: "Part of the price was paid before the invoice expired; the shop will contact you.",
	}
}

// merge fills s's empty fields from def.
func (s PageStrings) merge(def PageStrings) PageStrings {
	out := def
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.Lang, s.Lang)
	set(&out.Title, s.Title)
	set(&out.SendHeading, s.SendHeading)
	set(&out.AmountLabel, s.AmountLabel)
	set(&out.FiatLabel, s.FiatLabel)
	set(&out.CoinLabel, s.CoinLabel)
	set(&out.NetworkLabel, s.NetworkLabel)
	set(&out.AddressLabel, s.AddressLabel)
	set(&out.CopyAmount, s.CopyAmount)
	set(&out.CopyAddress, s.CopyAddress)
	set(&out.Copied, s.Copied)
	set(&out.MinimumNote, s.MinimumNote)
	set(&out.QRWithAmount, s.QRWithAmount)
	set(&out.QRAddressOnly, s.QRAddressOnly)
	set(&out.QRAlt, s.QRAlt)
	set(&out.QRAddressAlt, s.QRAddressAlt)
	set(&out.OpenWallet, s.OpenWallet)
	set(&out.QuoteLeft, s.QuoteLeft)
	set(&out.ExpiryLeft, s.ExpiryLeft)
	set(&out.PaidLabel, s.PaidLabel)
	set(&out.PendingLabel, s.PendingLabel)
	set(&out.RemainingLabel, s.RemainingLabel)
	set(&out.ProgressLabel, s.ProgressLabel)
	set(&out.Return, s.Return)
	set(&out.Refresh, s.Refresh)
	set(&out.NoScript, s.NoScript)
	set(&out.New, s.New)
	set(&out.NewPartial, s.NewPartial)
	set(&out.Processing, s.Processing)
	set(&out.Settled, s.Settled)
	set(&out.Expired, s.Expired)
	set(&out.Invalid, s.Invalid)
	set(&out.WrongCoin, s.WrongCoin)
	set(&out.PaidLate, s.PaidLate)
	set(&out.PaidOver, s.PaidOver)
	set(&out.ExpiredPartial, s.ExpiredPartial)
	return out
}

// PageOption configures the handler returned by Page.
type PageOption func(*pageConfig)

type pageConfig struct {
	tmpl      *template.Template
	css       []byte
	strings   PageStrings
	returnURL func(*Invoice) string
	poll      time.Duration
}

// WithPageTemplate replaces the page's template. It is executed with a
// PageData; start from the default, pageassets/page.html in this
// package's source, to keep the data-* attributes the page's script and
// tests rely on. A nil template keeps the default.
func WithPageTemplate(t *template.Template) PageOption {
	return func(c *pageConfig) {
		if t != nil {
			c.tmpl = t
		}
	}
}

// WithPageCSS adds css after the page's stylesheet, so that its rules
// override the default ones. It is served from the page's own origin
// (the Content-Security-Policy allows no inline style).
func WithPageCSS(css string) PageOption {
	return func(c *pageConfig) { c.css = append(c.css, "\n/* merchant */\n"+css...) }
}

// WithPageStrings sets the page's texts; its empty fields keep the
// defaults (DefaultPageStrings).
func WithPageStrings(s PageStrings) PageOption {
	return func(c *pageConfig) { c.strings = s.merge(c.strings) }
}

// WithReturnURL sets the merchant's return link shown once the invoice is
// final (settled, expired or cancelled), for example the order's page.
// Only https URLs and same-site paths ("/orders/7") are shown; fn
// returning "" (or anything else) shows none.
func WithReturnURL(fn func(*Invoice) string) PageOption {
	return func(c *pageConfig) { c.returnURL = fn }
}

// WithPollInterval sets how often an open page asks for its status
// (default DefaultPollInterval; values below 100ms are raised to it).
func WithPollInterval(d time.Duration) PageOption {
	return func(c *pageConfig) {
		if d > 0 {
			c.poll = max(d, 100*time.Millisecond)
		}
	}
}

// PageView is what the payment page shows of an invoice, and the JSON its
// status endpoint returns: both come from one function, so they never
// disagree. Amounts are display strings (coin amounts exact, fiat amounts
// rounded to cents); the links are relative to the page.
type PageView struct {
	ID        string    `json:"id"`
	Version   int64     `json:"version"`
	Status    Status    `json:"status"`
	Exception Exception `json:"exception"`
	// Final is true when no payment can change the status.
	Final bool `json:"final"`
	// Headline says where the invoice stands; Detail what is unusual.
	Headline string `json:"headline"`
	Detail   string `json:"detail"`
	// ShowPay: the invoice asks for payment (amount, address, QR codes);
	// ShowProgress: something was paid; ShowReturn: the return link.
	ShowPay      bool `json:"show_pay"`
	ShowProgress bool `json:"show_progress"`
	ShowReturn   bool `json:"show_return"`

	CoinName string `json:"coin_name"`
	Network  string `json:"network"`
	Symbol   string `json:"symbol"`
	Currency string `json:"currency"` // Currency, or Symbol for a price in the coin
	Due      string `json:"due"`      // in the coin
	// DueFiat is FiatLabel filled in ("≈ 25.00 USD"), "" for a price in the coin.
	DueFiat     string `json:"due_fiat"`
	MinimumNote string `json:"minimum_note"`
	Address     string `json:"address"`
	// PaymentURI asks for Due; "" when nothing is due or its scheme is
	// not one a page may link to. The QR codes encode it (and it without
	// its amount), or, when it is "", the bare address.
	PaymentURI string `json:"payment_uri"`

	Price     string `json:"price"`     // in Currency
	Paid      string `json:"paid"`      // confirmed, in Currency
	Pending   string `json:"pending"`   // unconfirmed, in Currency
	Remaining string `json:"remaining"` // in Currency
	Progress  int    `json:"progress"`  // percent of Price seen, 0 to 100

	// QuoteSeconds and ExpirySeconds are the seconds left on the quote and
	// on the invoice, -1 when they do not apply; QuoteLeft and ExpiryLeft
	// the same as "m:ss".
	QuoteSeconds  int64  `json:"quote_seconds"`
	ExpirySeconds int64  `json:"expiry_seconds"`
	QuoteLeft     string `json:"quote_left"`
	ExpiryLeft    string `json:"expiry_left"`

	QRURL        string `json:"qr_url"`
	QRAddressURL string `json:"qr_address_url"`
	QRAlt        string `json:"qr_alt"`
	QRAddressAlt string `json:"qr_address_alt"`
	StatusURL    string `json:"status_url"`
	PageURL      string `json:"page_url"`
	ReturnURL    string `json:"return_url"`
}

// PageData is what the page's template is executed with.
type PageData struct {
	View PageView
	// S holds the texts.
	S PageStrings
	// Assets is the relative path of the stylesheet and script ("_/").
	Assets string
	// Nonce is the script nonce the Content-Security-Policy allows.
	Nonce string
	// PollMillis is how often the script asks for the status.
	PollMillis int64
}

// PaymentLink is View.PaymentURI as a URL the template may link to.
func (p PageData) PaymentLink() template.URL { return template.URL(p.View.PaymentURI) }

// ReturnLink is View.ReturnURL as a URL the template may link to.
func (p PageData) ReturnLink() template.URL { return template.URL(p.View.ReturnURL) }

// Page returns the customer's payment page handler, to mount under a
// prefix removed with http.StripPrefix:
//
//	http.Handle("/pay/", http.StripPrefix("/pay", desk.Page()))
//
// It serves, for GET and HEAD:
//   - "/<ID>": the page (server-rendered; with JavaScript it polls its
//     status, counts down to the re-quote and to expiry, and turns to
//     paid or expired by itself; without, a reload shows the current
//     state). Its root element carries data-status and data-exception.
//   - "/<ID>/status": the same PageView as JSON.
//   - "/<ID>/qr.png" and "/<ID>/qr-address.png": the QR codes with and
//     without the amount, while payment is asked.
//   - "/_/page.css" and "/_/page.js".
//
// Only an invoice's ID (130 random bits, from Create) opens its page,
// status and QR codes; its OrderID never does. Unknown and malformed IDs
// get the same 404, after the same store lookup. Every response carries a
// strict Content-Security-Policy (scripts only from the page's origin with
// a per-response nonce, no inline script or style, no framing),
// X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer (the page's
// URL names the invoice) and Cache-Control: no-store. Each request reads
// the invoice with Get, so re-quotes and expiry apply.
func (d *Desk) Page(opts ...PageOption) http.Handler {
	c := &pageConfig{strings: DefaultPageStrings(), poll: DefaultPollInterval}
	css, _ := pageAssets.ReadFile("pageassets/page.css")
	c.css = append([]byte(nil), css...)
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.tmpl == nil {
		c.tmpl = template.Must(template.ParseFS(pageAssets, "pageassets/page.html"))
	}
	js, _ := pageAssets.ReadFile("pageassets/page.js")
	return &pageHandler{d: d, cfg: c, js: js}
}

type pageHandler struct {
	d   *Desk
	cfg *pageConfig
	js  []byte
}

// probeID has the form of an ID but can never be one ('0' is not in the
// IDs' alphabet): malformed IDs are looked up as it, so that they cost
// what an unknown ID costs.
const probeID = "00000000000000000000000000"

// pageID reports whether id has the form of Create's IDs (rand.Text: 26
// characters of the base32 alphabet).
func pageID(id string) bool {
	if len(id) != len(probeID) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

const basePolicy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func securityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// blankPNG is a 1×1 transparent image: the QR code of an invoice with
// nothing to pay.
var blankPNG = func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// notFound is the one answer to every ID that opens nothing.
func notFound(w http.ResponseWriter) {
	securityHeaders(w.Header(), basePolicy)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("404 page not found\n"))
}

func (h *pageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		securityHeaders(w.Header(), basePolicy)
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	switch p {
	case PageAssetsPath + "page.css":
		h.asset(w, "text/css; charset=utf-8", h.cfg.css)
		return
	case PageAssetsPath + "page.js":
		h.asset(w, "text/javascript; charset=utf-8", h.js)
		return
	}
	id, rest, sub := strings.Cut(p, "/")
	switch {
	case !sub && rest == "", rest == PageStatusPath, rest == PageQRPath, rest == PageQRAddressPath:
	default:
		id = "" // "<ID>/" too: its relative links would not resolve
	}
	valid := pageID(id)
	lookup := id
	if !valid {
		lookup = probeID
	}
	inv, err := h.d.Get(r.Context(), lookup)
	switch {
	case err == nil && valid:
	case err == nil || errors.Is(err, ErrNotFound):
		notFound(w)
		return
	default:
		h.d.logError(r.Context(), "payment page: invoice not read", id, err)
		securityHeaders(w.Header(), basePolicy)
		http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
		return
	}
	v := h.view(inv)
	switch rest {
	case "":
		h.page(w, r, v)
	case PageStatusPath:
		b, err := json.Marshal(v)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		securityHeaders(w.Header(), basePolicy)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	case PageQRPath, PageQRAddressPath:
		content := v.PaymentURI
		if rest == PageQRAddressPath {
			content = addressURI(v.PaymentURI, inv.AddressIn)
		}
		if !v.ShowPay || content == "" {
			// Nothing to pay: an open page may still be loading the code
			// of a moment ago, so it gets an image, but a blank one,
			// never a code to pay.
			securityHeaders(w.Header(), basePolicy)
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(blankPNG)
			return
		}
		png, err := qrcode.Encode(content, qrcode.Medium, 320)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		securityHeaders(w.Header(), basePolicy)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}
}

func (h *pageHandler) asset(w http.ResponseWriter, ctype string, b []byte) {
	securityHeaders(w.Header(), basePolicy)
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(b)
}

func (h *pageHandler) page(w http.ResponseWriter, r *http.Request, v PageView) {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	nonce := base64.RawURLEncoding.EncodeToString(raw[:])
	data := PageData{View: v, S: h.cfg.strings, Assets: PageAssetsPath, Nonce: nonce, PollMillis: h.cfg.poll.Milliseconds()}
	var buf bytes.Buffer
	if err := h.cfg.tmpl.Execute(&buf, data); err != nil {
		h.d.logError(r.Context(), "payment page: template failed", v.ID, err)
		securityHeaders(w.Header(), basePolicy)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header(), "default-src 'none'; script-src 'self' 'nonce-"+nonce+"'; style-src 'self'; "+
		"img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// addressURI is uri, a payment URI that passed safeWalletLink, without
// its amount (the part before "?"), or, when there is none, the bare
// address (if it has a scheme, one safeWalletLink allows).
func addressURI(uri, address string) string {
	if u, _, _ := strings.Cut(uri, "?"); u != "" {
		return u
	}
	if strings.Contains(address, ":") {
		return safeWalletLink(address)
	}
	return address
}

// safeWalletLink returns s if a page may link to it: a payment URI with a
// wallet scheme (not javascript:, data:, vbscript:, file:, blob:).
func safeWalletLink(s string) string {
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || scheme == "" {
		return ""
	}
	for i, c := range scheme {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	switch strings.ToLower(scheme) {
	case "javascript", "data", "vbscript", "file", "blob", "filesystem", "about":
		return ""
	}
	return s
}

// safeReturnLink returns s if it is an https URL or a true same-site path
// ("/orders/7"), else "". It is the one rule for the server-rendered link
// and for the status the page's script reads. Refused: any ASCII control
// character, space or backslash (browsers drop tabs and newlines and read
// "\\" as "/", so "/\\host" and "/<tab>/host" are "//host"), "//",
// other schemes (http included), and credentials in the URL.
func safeReturnLink(s string) string {
	if s == "" {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || c == '\\' {
			return ""
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	if s[0] == '/' {
		if len(s) > 1 && s[1] == '/' || u.Scheme != "" || u.Host != "" {
			return ""
		}
		return s
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	return s
}

func fill(s string, kv ...string) string { return strings.NewReplacer(kv...).Replace(s) }

// symbol is the coin's short name: "USDT" for trc20_usdt, "BTC" for btc.
func symbol(tk string) string {
	if _, coin, ok := strings.Cut(tk, "_"); ok {
		tk = coin
	}
	return strings.ToUpper(tk)
}

func left(at, end time.Time) (int64, string) {
	if end.IsZero() {
		return -1, ""
	}
	s := int64(end.Sub(at) / time.Second)
	if end.Sub(at) > 0 && end.Sub(at)%time.Second != 0 {
		s++
	}
	s = max(s, 0)
	if s >= 3600 {
		return s, fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	return s, fmt.Sprintf("%d:%02d", s/60, s%60)
}

// view is the one function that turns an invoice into what the page and
// its status endpoint show.
func (h *pageHandler) view(inv *Invoice) PageView {
	s := h.cfg.strings
	now := h.d.now()
	sym := symbol(inv.Ticker)
	unit, places := inv.Currency, int32(2)
	if unit == "" {
		unit, places = sym, inv.Decimals
	}
	money := func(x decimal.Decimal) string { return x.StringFixed(places) }
	v := PageView{
		ID: inv.ID, Version: inv.Version, Status: inv.Status, Exception: inv.Exception,
		Final: inv.Status.Final(), CoinName: inv.CoinName, Network: strings.ToUpper(inv.Network),
		Symbol: sym, Currency: unit, Address: inv.AddressIn,
		Price: money(inv.Price), Paid: money(inv.PaidFiat), Pending: money(inv.PaidPendingFiat),
		Remaining: money(inv.Remaining),
		StatusURL: inv.ID + "/" + PageStatusPath, PageURL: inv.ID,
	}
	if v.CoinName == "" {
		v.CoinName = sym
	}
	seen := inv.PaidFiat.Add(inv.PaidPendingFiat)
	v.ShowProgress = seen.IsPositive()
	if inv.Price.IsPositive() {
		p := seen.Mul(decimal.NewFromInt(100)).Div(inv.Price).IntPart()
		v.Progress = int(min(max(p, 0), 100))
	}
	switch inv.Status {
	case StatusNew:
		v.Headline = s.New
		if inv.Exception == ExceptionPaidPartial {
			v.Headline = s.NewPartial
		}
	case StatusProcessing:
		v.Headline = s.Processing
	case StatusSettled:
		v.Headline = s.Settled
	case StatusExpired:
		v.Headline = s.Expired
	case StatusInvalid:
		v.Headline = s.Invalid
	}
	switch inv.Exception {
	case ExceptionWrongCoin:
		v.Detail = s.WrongCoin
	case ExceptionPaidLate:
		v.Detail = s.PaidLate
	case ExceptionPaidOver:
		v.Detail = s.PaidOver
	case ExceptionPaidPartial:
		if inv.Status == StatusExpired || inv.Status == StatusInvalid {
			v.Detail = s.ExpiredPartial
		}
	}
	v.ShowPay = inv.Paying() && inv.Due.IsPositive()
	if v.ShowPay {
		v.Due = inv.Due.String()
		if inv.Currency != "" {
			v.DueFiat = fill(s.FiatLabel, "{amount}", inv.DueFiat.StringFixed(2), "{currency}", inv.Currency)
		}
		v.MinimumNote = fill(s.MinimumNote, "{min}", inv.Minimum.String(), "{symbol}", sym)
		v.PaymentURI = safeWalletLink(inv.PaymentURI)
		vq := fmt.Sprintf("?v=%d", inv.Version)
		if v.PaymentURI != "" {
			v.QRURL = inv.ID + "/" + PageQRPath + vq
			v.QRAlt = fill(s.QRAlt, "{amount}", v.Due, "{symbol}", sym, "{address}", inv.AddressIn)
		}
		v.QRAddressURL = inv.ID + "/" + PageQRAddressPath + vq
		v.QRAddressAlt = fill(s.QRAddressAlt, "{address}", inv.AddressIn)
		v.QuoteSeconds, v.QuoteLeft = left(now, inv.QuoteExpiresAt)
		v.ExpirySeconds, v.ExpiryLeft = left(now, inv.ExpiresAt)
	} else {
		v.QuoteSeconds, v.ExpirySeconds = -1, -1
	}
	if h.cfg.returnURL != nil && v.Final {
		v.ReturnURL = safeReturnLink(h.cfg.returnURL(inv.Clone()))
	}
	v.ShowReturn = v.ReturnURL != ""
	return v
}
