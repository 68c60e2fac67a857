package invoice

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
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
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	qrcode "github.com/skip2/go-qrcode"
)

//go:embed pageassets/page.html pageassets/page.css pageassets/page.js pageassets/claim.html
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
	// PageAssetsPath holds the stylesheet (page.css), the script (page.js)
	// and the merchant's logo (logo.png, see WithLogo).
	PageAssetsPath = "_/"
)

// DefaultPollInterval is how often an open page asks for its status.
const DefaultPollInterval = 2 * time.Second

// Limits of WithLogo.
const (
	// MaxLogoBytes is the largest logo file the page serves.
	MaxLogoBytes = 256 << 10
	// MaxLogoPixels is the largest width and height of a logo.
	MaxLogoPixels = 1024
)

// PageOption configures the handler returned by Page.
type PageOption func(*pageConfig)

type pageConfig struct {
	tmpl      *template.Template
	css       []byte
	langs     []PageStrings
	defLang   string
	returnURL func(*Invoice) string
	poll      time.Duration
	merchant  string
	logo      []byte
	problems  []string // options that were refused, logged by Page
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
// (the Content-Security-Policy allows no inline style). The colours are
// CSS custom properties (--ink, --paper, --accent, …; see page.css), set
// once for light and once for dark screens.
func WithPageCSS(css string) PageOption {
	return func(c *pageConfig) { c.css = append(c.css, "\n/* merchant */\n"+css...) }
}

// WithPageStrings sets the texts of the language s.Lang ("" is English):
// its empty fields keep that language's built-in translation
// (PageStringsFor), or English for a language the page does not have,
// which it adds. Languages are told apart by their primary subtag ("pt"
// in "pt-BR"). Refused (and logged): a Lang that is not a language tag,
// and marks that would change what a number reads (a digit in the
// decimal or group mark, or the same mark for both).
func WithPageStrings(s PageStrings) PageOption {
	return func(c *pageConfig) {
		if s.Lang == "" {
			s.Lang = "en"
		}
		p := primary(s.Lang)
		if p == "" || len(s.Lang) > 35 || strings.ContainsFunc(s.Lang, func(r rune) bool {
			return !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			c.problems = append(c.problems, "WithPageStrings: not a language tag")
			return
		}
		i := slices.IndexFunc(c.langs, func(l PageStrings) bool { return primary(l.Lang) == p })
		var next PageStrings
		if i >= 0 {
			next = s.merge(c.langs[i])
		} else {
			if s.LangName == "" {
				s.LangName = s.Lang
			}
			next = s.merge(c.langs[0])
		}
		digit := func(m string) bool { return strings.ContainsFunc(m, unicode.IsDigit) }
		if digit(next.DecimalMark) || digit(next.GroupMark) || next.DecimalMark == next.GroupMark {
			c.problems = append(c.problems, "WithPageStrings: the decimal and group marks would change what numbers read")
			return
		}
		if i >= 0 {
			c.langs[i] = next
		} else {
			c.langs = append(c.langs, next)
		}
	}
}

// WithDefaultLanguage sets the page's language for customers whose
// browser asks for none the page has (default English). lang is matched
// like PageStringsFor's; one the page does not have is ignored.
func WithDefaultLanguage(lang string) PageOption {
	return func(c *pageConfig) { c.defLang = lang }
}

// WithReturnURL sets the merchant's return link shown once the payment
// is received or the invoice is final, for example the order's page.
// Only https URLs and same-site paths ("/orders/7") are shown; fn
// returning "" (or anything else) shows none.
func WithReturnURL(fn func(*Invoice) string) PageOption {
	return func(c *pageConfig) { c.returnURL = fn }
}

// WithPollInterval sets how often an open page asks for its status
// (default DefaultPollInterval; values below 100ms are raised to it). A
// page in a background tab asks at most every 30 seconds, and a final one
// five times less often.
func WithPollInterval(d time.Duration) PageOption {
	return func(c *pageConfig) {
		if d > 0 {
			c.poll = max(d, 100*time.Millisecond)
		}
	}
}

// WithMerchantName sets the shop's name, shown at the top of the page,
// in its title and on the receipt, as text. Control characters and marks
// that change the direction of text are dropped, and it is cut to 80
// characters.
func WithMerchantName(name string) PageOption {
	return func(c *pageConfig) { c.merchant = plainText(name, 80) }
}

// WithLogo sets the shop's logo, a PNG of at most MaxLogoBytes and
// MaxLogoPixels wide and high, shown beside its name. It is served from
// the page's own origin (<prefix>/_/logo.png), like everything the page
// loads. A logo that is not such a PNG is not shown (and is logged).
func WithLogo(pngData []byte) PageOption {
	return func(c *pageConfig) {
		c.logo = nil
		if len(pngData) == 0 {
			return
		}
		if len(pngData) > MaxLogoBytes {
			c.problems = append(c.problems, fmt.Sprintf("WithLogo: %d bytes, more than %d", len(pngData), MaxLogoBytes))
			return
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(pngData))
		switch {
		case err != nil || format != "png":
			c.problems = append(c.problems, "WithLogo: not a PNG")
		case cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoPixels || cfg.Height > MaxLogoPixels:
			c.problems = append(c.problems, fmt.Sprintf("WithLogo: %d×%d pixels, more than %d", cfg.Width, cfg.Height, MaxLogoPixels))
		default:
			c.logo = append([]byte(nil), pngData...)
		}
	}
}

// Phases of the payment page: what it asks of the customer now (and
// PhaseChoose, for the customer's choice of coin).
const (
	// PhasePay: the invoice waits for payment; the page shows what to send.
	PhasePay = "pay"
	// PhaseUpdating: the invoice waits for payment, but its quote has
	// lapsed: the page shows no amount until a new quote is made.
	PhaseUpdating = "updating"
	// PhaseProcessing: paid in full, not all confirmed.
	PhaseProcessing = "processing"
	// PhaseSettled: paid; the page is a receipt.
	PhaseSettled = "settled"
	// PhaseExpired and PhaseInvalid: nothing more may be sent.
	PhaseExpired = "expired"
	PhaseInvalid = "invalid"
)

// PageView is what the payment page shows of an invoice, and the JSON its
// status endpoint returns: both come from one function, so they never
// disagree. It shows the invoice as the clock makes it when it is read:
// an invoice past its deadline is expired, even before that is stored.
//
// Texts and amounts are written for the page's language (Lang): amounts
// in the coin keep every digit, fiat amounts are rounded to the
// currency's minor unit. Due, Address and PaymentURI are the exact
// machine values, for copying and for wallets. Links are relative to the
// page.
type PageView struct {
	ID        string    `json:"id"`
	Version   int64     `json:"version"`
	Lang      string    `json:"lang"`
	Status    Status    `json:"status"`
	Exception Exception `json:"exception"`
	// Phase is one of the Phase constants.
	Phase string `json:"phase"`
	// Final is true when no payment can change the status.
	Final bool `json:"final"`
	// Title is the page's title; Merchant the shop's name (WithMerchantName).
	Title    string `json:"title"`
	Merchant string `json:"merchant"`
	// Description is what is bought (Invoice.Description, as text: without
	// control characters and direction marks, cut to 300 characters);
	// Total its price.
	Description string `json:"description"`
	Total       string `json:"total"`
	// Headline says where the invoice stands; Detail what is unusual or
	// what happens next; Warning what the customer must not do.
	Headline string `json:"headline"`
	Detail   string `json:"detail"`
	Warning  string `json:"warning"`
	// ShowPay: the invoice asks for payment (amount, address, QR codes);
	// ShowProgress: something was paid but not enough; ShowReceipt:
	// payments and the invoice's details; ShowID: the invoice ID to quote
	// to the shop; ShowReturn: the return link.
	ShowPay      bool `json:"show_pay"`
	ShowProgress bool `json:"show_progress"`
	ShowReceipt  bool `json:"show_receipt"`
	ShowID       bool `json:"show_id"`
	ShowReturn   bool `json:"show_return"`
	// ShowChoose: the page lists the invoice's coins (Coins) as a form that
	// posts the one chosen to ChooseAction (PhaseChoose); BackURL leaves it
	// for the coin chosen last. ChooseURL is the page with that list, to
	// switch coin, while the invoice allows it ("" otherwise).
	ShowChoose   bool       `json:"show_choose"`
	Coins        []PageCoin `json:"coins,omitempty"`
	ChooseAction string     `json:"choose_action"`
	ChooseURL    string     `json:"choose_url"`
	BackURL      string     `json:"back_url"`

	CoinName string `json:"coin_name"`
	Network  string `json:"network"`
	Symbol   string `json:"symbol"`
	Currency string `json:"currency"` // Currency, or Symbol for a price in the coin
	// Due is the amount to send, in the coin, exact ("0.00041667");
	// DueText the same for the language ("0,00041667").
	Due     string `json:"due"`
	DueText string `json:"due_text"`
	// DueFiat is FiatLabel filled in ("≈ $25.00"), "" for a price in the coin.
	DueFiat     string `json:"due_fiat"`
	MinimumNote string `json:"minimum_note"`
	NetworkNote string `json:"network_note"`
	Address     string `json:"address"`
	// PaymentURI asks for Due; "" when nothing is due, when the service's
	// URI form is unknown, or when its scheme is not one a page may link
	// to. The QR codes encode it (and it without its amount), or, when it
	// is "", the bare address.
	PaymentURI string `json:"payment_uri"`

	// Received is what arrived in the invoice's coin, confirmed or not
	// ("25 USDT"), and in each coin the customer chose before ("0.125 LTC
	// + 0.00025 BTC"); payments in a coin the invoice does not accept are
	// not in it.
	Received  string `json:"received"`
	Paid      string `json:"paid"`      // confirmed, in Currency, for the language
	Pending   string `json:"pending"`   // unconfirmed
	Remaining string `json:"remaining"` // still to pay
	Progress  int    `json:"progress"`  // percent of the price seen, 0 to 100
	// ProgressText is ProgressText filled in ("40% paid").
	ProgressText string `json:"progress_text"`

	// QuoteSeconds and ExpirySeconds are the seconds left on the quote and
	// on the invoice, -1 when they do not apply; QuoteLeft and ExpiryLeft
	// the same as "m:ss". ExpiryTotal is the invoice's whole time, in
	// seconds, for the bar.
	QuoteSeconds  int64  `json:"quote_seconds"`
	ExpirySeconds int64  `json:"expiry_seconds"`
	ExpiryTotal   int64  `json:"expiry_total"`
	QuoteLeft     string `json:"quote_left"`
	ExpiryLeft    string `json:"expiry_left"`

	QRURL        string `json:"qr_url"`
	QRAddressURL string `json:"qr_address_url"`
	QRAlt        string `json:"qr_alt"`
	QRAddressAlt string `json:"qr_address_alt"`
	StatusURL    string `json:"status_url"`
	PageURL      string `json:"page_url"`
	ReturnURL    string `json:"return_url"`

	// Date is when the invoice was settled (its last confirmation), or
	// created; DateTime the same in RFC 3339.
	Date     string `json:"date"`
	DateTime string `json:"date_time"`
	// Payments are the payments received, in the order they were seen.
	Payments []PagePayment `json:"payments"`
}

// PagePayment is one payment on the page's receipt.
type PagePayment struct {
	// Amount is written for the language with its coin ("0,0002 BTC");
	// Value is exact ("0.0002").
	Amount    string `json:"amount"`
	Value     string `json:"value"`
	TxID      string `json:"txid"`
	Confirmed bool   `json:"confirmed"`
	Late      bool   `json:"late"`
	WrongCoin bool   `json:"wrong_coin"`
	Date      string `json:"date"`
	DateTime  string `json:"date_time"`
}

// PageData is what the page's template is executed with.
type PageData struct {
	View PageView
	// S holds the texts of the page's language.
	S PageStrings
	// Langs are the page's languages, for the switch.
	Langs []PageLanguage
	// Assets is the relative path of the stylesheet, script and logo
	// ("_/"); CSSURL, JSURL and LogoURL are their relative URLs, with a
	// version (LogoURL is "" without a logo, LogoWidth and LogoHeight its
	// size in pixels).
	Assets, CSSURL, JSURL, LogoURL string
	LogoWidth, LogoHeight          int
	// ETag is the status's entity tag for this view: the script asks
	// whether it changed.
	ETag string
	// Nonce is the script nonce the Content-Security-Policy allows.
	Nonce string
	// PollMillis is how often the script asks for the status.
	PollMillis int64
}

// PageLanguage is one entry of the page's language switch.
type PageLanguage struct {
	Lang    string // "de"
	Name    string // "Deutsch"
	URL     string // "?lang=de", relative to the page
	Current bool
}

// PaymentLink is View.PaymentURI as a URL the template may link to.
func (p PageData) PaymentLink() template.URL { return template.URL(p.View.PaymentURI) }

// ReturnLink is View.ReturnURL as a URL the template may link to.
func (p PageData) ReturnLink() template.URL { return template.URL(p.View.ReturnURL) }

// AddressParts splits View.Address for display: its first and last four
// characters (which customers compare after pasting) and the rest.
func (p PageData) AddressParts() []string {
	a := p.View.Address
	if len(a) < 12 {
		return []string{"", a, ""}
	}
	return []string{a[:4], a[4 : len(a)-4], a[len(a)-4:]}
}

// Page returns the customer's payment page handler, to mount under a
// prefix removed with http.StripPrefix:
//
//	http.Handle("/pay/", http.StripPrefix("/pay", desk.Page(
//		invoice.WithMerchantName("Coffee Roasters"),
//		invoice.WithReturnURL(func(inv *invoice.Invoice) string { return "/orders/" + inv.OrderID }),
//	)))
//
// It serves, for GET and HEAD (and POST where said):
//   - "/<ID>": the page, on one phone screen: the shop, what is bought and
//     its total, the status with the progress of a partial payment, the
//     time left, the amount in the coin, one QR code (a switch shows the
//     address without the amount) and the address, with copy buttons.
//     After payment it is a printable receipt; after expiry it says not to
//     send, and what to quote to the shop. Without JavaScript a reload
//     shows the current state; with it, the page asks for its status and
//     updates itself when it changed, counts down, and copies. Its root
//     element carries data-status, data-exception and data-phase.
//   - "/<ID>/status": the same PageView as JSON, with an ETag: a request
//     with that tag in If-None-Match gets 304 Not Modified while nothing
//     shown changed. A status request reads the invoice once and writes
//     nothing.
//   - "/<ID>/qr.png" and "/<ID>/qr-address.png": the QR codes with and
//     without the amount, while payment is asked.
//   - For an invoice with Coins: while no coin is chosen, and on
//     "/<ID>?choose=1" (a switch, linked from the page while the invoice
//     allows one), the page lists the coins, each with its name, network
//     and what the invoice asks in it, as a plain form (buttons, no
//     script needed) that posts the coin to "/<ID>/choose" (POST), which
//     calls Desk.Choose and answers 303 See Other to the page. Such a
//     page's policy lets forms post to its own origin (form-action
//     'self'); no other page's does. A POST from another site
//     (Sec-Fetch-Site, Origin: http.CrossOriginProtection) is refused
//     with 403; the choices an invoice allows are bounded (MaxChoices),
//     and its addresses by its coins.
//   - "/_/page.css", "/_/page.js" and "/_/logo.png".
//   - "/claim/<token>": a refund's claim page (Refund.ClaimPath), where
//     the customer gives the address the refund goes to: it shows what
//     will be sent and where the refund stands, in the page's look and
//     languages, and its form (plain HTML: the page has no script) posts
//     the address to the page itself (GET, HEAD and POST). The address is
//     checked for the refund's coin's network, checksums included; a
//     refused one is said in the customer's language (another network's,
//     a typo, not an address) with the field marked invalid; an address,
//     once set, cannot be changed. Only a refund's token (130 random
//     bits, holding no invoice or order ID) opens it: a guessed token, one
//     of a cancelled refund or of a link past its ClaimFor get the same
//     404 as an unknown invoice, after one store lookup. It sends the
//     payment page's headers and policy, except that while it asks for the
//     address its form may post to itself (form-action 'self'; once an
//     address is set it has no form, and 'none'), and never shows the merchant's reason,
//     the invoice or the order. As for the picker's form, a POST from
//     another site is refused with 403.
//
// The language is the one the "lang" query parameter names (the page's
// switch), else the one the browser's Accept-Language prefers, among the
// built-in ones (PageStringsFor) and those WithPageStrings adds.
//
// Only an invoice's ID (130 random bits, from Create) opens its page,
// status and QR codes; its OrderID never does. Unknown and malformed IDs
// get the same 404, after the same store lookup. Every response carries a
// strict Content-Security-Policy (everything from the page's origin; a
// script runs only with the response's nonce, also one from the page's
// origin; no inline style; no framing), X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer
// (the page's URL names the invoice); the page and its status
// Cache-Control: no-store. Each GET or HEAD of a page or a status is one
// read of the stored invoice and writes nothing (the choice of a coin and
// a refund's claim form are the posts that write); it shows the invoice as the clock makes it now
// (Invoice.AsOf): a deadline that passed shows as expired before Tick
// stores it, and a quote that lapsed shows as being updated until Tick
// renews it.
func (d *Desk) Page(opts ...PageOption) http.Handler {
	c := &pageConfig{langs: append([]PageStrings(nil), builtinStrings...), poll: DefaultPollInterval}
	css, _ := pageAssets.ReadFile("pageassets/page.css")
	c.css = append([]byte(nil), css...)
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	for _, p := range c.problems {
		d.logError(context.Background(), "payment page: option refused", "", errors.New(p))
	}
	if c.tmpl == nil {
		c.tmpl = template.Must(template.ParseFS(pageAssets, "pageassets/page.html"))
	}
	js, _ := pageAssets.ReadFile("pageassets/page.js")
	h := &pageHandler{d: d, cfg: c, js: js, crossOrigin: http.NewCrossOriginProtection()}
	h.def = negotiate(c.langs, c.defLang, "", 0)
	h.cssURL = PageAssetsPath + "page.css?v=" + contentTag(c.css)
	h.jsURL = PageAssetsPath + "page.js?v=" + contentTag(js)
	if c.logo != nil {
		h.logoURL = PageAssetsPath + "logo.png?v=" + contentTag(c.logo)
		cfg, _ := png.DecodeConfig(bytes.NewReader(c.logo))
		h.logoW, h.logoH = cfg.Width, cfg.Height
	}
	return h
}

type pageHandler struct {
	d                      *Desk
	cfg                    *pageConfig
	crossOrigin            *http.CrossOriginProtection
	js                     []byte
	def                    int // index of the default language
	cssURL, jsURL, logoURL string
	logoW, logoH           int
}

// contentTag names a version of an asset.
func contentTag(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:9])
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
	p := strings.TrimPrefix(r.URL.Path, "/")
	// The two forms post: the claim page's to itself, the picker's to
	// "<ID>/choose" (which only takes a POST).
	token, isClaim := strings.CutPrefix(p, PageClaimPath+"/")
	chooseID, isChoose := strings.CutSuffix(p, "/"+PageChoosePath)
	isChoose = isChoose && !isClaim
	allow := "GET, HEAD"
	switch {
	case isClaim:
		allow = "GET, HEAD, POST"
	case isChoose:
		allow = "POST"
	}
	if !slices.Contains(strings.Split(allow, ", "), r.Method) {
		securityHeaders(w.Header(), basePolicy)
		w.Header().Set("Allow", allow)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodPost {
		if err := h.crossOrigin.Check(r); err != nil {
			securityHeaders(w.Header(), basePolicy)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
	}
	switch {
	case isClaim:
		h.claim(w, r, token)
		return
	case isChoose:
		h.choose(w, r, chooseID)
		return
	}
	switch {
	case p == PageAssetsPath+"page.css":
		h.asset(w, "text/css; charset=utf-8", h.cfg.css)
		return
	case p == PageAssetsPath+"page.js":
		h.asset(w, "text/javascript; charset=utf-8", h.js)
		return
	case p == PageAssetsPath+"logo.png" && h.cfg.logo != nil:
		h.asset(w, "image/png", h.cfg.logo)
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
	now := h.d.now()
	inv, err := h.read(r.Context(), lookup, now)
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
	s := h.language(r)
	v := h.view(inv, now, s, askOf(r))
	switch rest {
	case "":
		h.page(w, r, v, s)
	case PageStatusPath:
		h.status(w, r, v)
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
		png, err := qrcode.Encode(content, qrcode.Medium, 384)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		securityHeaders(w.Header(), basePolicy)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}
}

// read returns the invoice as the clock makes it at now: one read of the
// store, nothing written.
func (h *pageHandler) read(ctx context.Context, id string, now time.Time) (*Invoice, error) {
	r, err := h.d.store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.Invoice.AsOf(now), nil
}

func (h *pageHandler) asset(w http.ResponseWriter, ctype string, b []byte) {
	securityHeaders(w.Header(), basePolicy)
	// Asset URLs carry a version of their content (?v=…).
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(b)
}

// status writes v as JSON with its ETag, or 304 when the request's
// If-None-Match names it.
func (h *pageHandler) status(w http.ResponseWriter, r *http.Request, v PageView) {
	tag := viewETag(v)
	securityHeaders(w.Header(), basePolicy)
	w.Header().Set("ETag", tag)
	w.Header().Set("Vary", "Accept-Language")
	if etagMatch(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// viewETag is the entity tag of what a view shows: a hash of its JSON
// without the seconds left, which change every second while nothing else
// does (an open page counts them down itself). Any other change, and a
// view of another invoice or language, has another tag.
func viewETag(v PageView) string {
	v.QuoteSeconds, v.ExpirySeconds, v.QuoteLeft, v.ExpiryLeft = 0, 0, "", ""
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// etagMatch reports whether the If-None-Match header names tag (strong or
// weak). "*" is not honoured: a status is always sent unless its own tag
// is named.
func etagMatch(header, tag string) bool {
	if header == "" || len(header) > 1024 {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == tag {
			return true
		}
	}
	return false
}

// newNonce returns a fresh script nonce.
func newNonce() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// languages is the page's language switch, with s current.
func (h *pageHandler) languages(s *PageStrings) []PageLanguage {
	langs := make([]PageLanguage, len(h.cfg.langs))
	for i, l := range h.cfg.langs {
		p := primary(l.Lang)
		langs[i] = PageLanguage{Lang: l.Lang, Name: l.LangName, URL: "?lang=" + p, Current: p == primary(s.Lang)}
	}
	return langs
}

func (h *pageHandler) page(w http.ResponseWriter, r *http.Request, v PageView, s *PageStrings) {
	nonce := newNonce()
	langs := h.languages(s)
	data := PageData{View: v, S: *s, Langs: langs, Assets: PageAssetsPath, CSSURL: h.cssURL, JSURL: h.jsURL,
		LogoURL: h.logoURL, LogoWidth: h.logoW, LogoHeight: h.logoH,
		ETag: viewETag(v), Nonce: nonce, PollMillis: h.cfg.poll.Milliseconds()}
	var buf bytes.Buffer
	if err := h.cfg.tmpl.Execute(&buf, data); err != nil {
		h.d.logError(r.Context(), "payment page: template failed", v.ID, err)
		securityHeaders(w.Header(), basePolicy)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header(), pagePolicy(nonce, formAction(v.ShowChoose)))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept-Language")
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

// plainText is s without control characters and the marks that change
// the direction of text (which can make "exe.gpj" read "jpg.exe"), spaces
// collapsed, cut to max characters: text from the merchant shown as it
// reads. Joiners (in emoji and in some scripts) stay.
func plainText(s string, max int) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case r == utf8.RuneError, unicode.Is(unicode.Cc, r), unicode.Is(unicode.Bidi_Control, r):
			continue
		}
		if n >= max {
			break
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// fill replaces the placeholders of kv (pairs: "{amount}", value) in s,
// in one pass: a value is never read for placeholders.
func fill(s string, kv ...string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		key, v := s[i:i+j+1], s[i:i+j+1]
		for k := 0; k+1 < len(kv); k += 2 {
			if kv[k] == key {
				v = kv[k+1]
				break
			}
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// symbol is the coin's short name: "USDT" for trc20_usdt, "BTC" for btc.
func symbol(tk string) string {
	if _, coin, ok := strings.Cut(tk, "_"); ok {
		tk = coin
	}
	return strings.ToUpper(tk)
}

// networkName is how the page names a token's network: "TRC20" for
// trc20, "Polygon" for polygon.
func networkName(n string) string {
	if n == "" || strings.ContainsAny(n, "0123456789") {
		return strings.ToUpper(n)
	}
	return strings.ToUpper(n[:1]) + n[1:]
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
// its status endpoint show, in the language s, with what the customer
// asked (a.picking: the picker to switch coin).
func (h *pageHandler) view(inv *Invoice, now time.Time, s *PageStrings, a pageAsk) PageView {
	sym := symbol(inv.Ticker)
	unit := inv.Currency
	// amount writes an amount in the invoice's currency (the coin for a
	// price in the coin).
	amount := func(x decimal.Decimal) string {
		if inv.Currency == "" {
			return s.coinAmount(x.Round(inv.Decimals), sym)
		}
		return s.money(x, inv.Currency)
	}
	if unit == "" {
		unit = sym
	}
	lang := primary(s.Lang)
	v := PageView{
		ID: inv.ID, Version: inv.Version, Lang: s.Lang, Status: inv.Status, Exception: inv.Exception,
		Final: inv.Status.Final(), Merchant: h.cfg.merchant, Description: plainText(inv.Description, 300),
		Total: amount(inv.Price), CoinName: inv.CoinName, Network: networkName(inv.Network),
		Symbol: sym, Currency: unit, Address: inv.AddressIn,
		Received: s.coinAmount(inv.Paid.Add(inv.PaidPending), sym),
		Paid:     amount(inv.PaidFiat), Pending: amount(inv.PaidPendingFiat), Remaining: amount(inv.Remaining),
		StatusURL: inv.ID + "/" + PageStatusPath + "?lang=" + lang + a.query(), PageURL: inv.ID + "?lang=" + lang + a.query(),
		QuoteSeconds: -1, ExpirySeconds: -1,
	}
	v.Title = s.Title
	if v.Merchant != "" {
		v.Title = fill(s.PayTo, "{shop}", v.Merchant)
	}
	if v.CoinName == "" {
		v.CoinName = sym
	}
	if len(inv.Coins) > 0 {
		v.Received = receivedText(inv, s)
	}
	seen := inv.PaidFiat.Add(inv.PaidPendingFiat)
	if inv.Price.IsPositive() {
		p := seen.Mul(decimal.NewFromInt(100)).Div(inv.Price).IntPart()
		v.Progress = int(min(max(p, 0), 100))
	}
	v.ProgressText = fill(s.ProgressText, "{percent}", s.percent(v.Progress))

	switch {
	case choosing(inv, a):
		v.Phase = PhaseChoose
		pickerView(&v, inv, now, s, a)
	case inv.Status == StatusNew && quoteDue(inv, now):
		v.Phase, v.Headline, v.Detail = PhaseUpdating, s.Updating, s.UpdatingNote
	case inv.Status == StatusNew:
		v.Phase, v.Headline = PhasePay, s.New
		if inv.Exception == ExceptionPaidPartial {
			v.Headline = s.NewPartial
		}
	case inv.Status == StatusProcessing:
		v.Phase, v.Headline, v.Detail = PhaseProcessing, s.Processing, s.ProcessingNote
	case inv.Status == StatusSettled:
		v.Phase, v.Headline = PhaseSettled, s.Settled
	case inv.Status == StatusExpired:
		v.Phase, v.Headline, v.Warning = PhaseExpired, s.Expired, s.DoNotSend
	case inv.Status == StatusInvalid:
		v.Phase, v.Headline, v.Warning = PhaseInvalid, s.Invalid, s.DoNotSend
	}
	switch inv.Exception {
	case ExceptionWrongCoin:
		v.Detail = s.WrongCoin
	case ExceptionPaidLate:
		v.Detail = s.PaidLate
	case ExceptionPaidOver:
		v.Detail = s.PaidOver
	case ExceptionPaidPartial:
		if v.Final {
			v.Detail = s.ExpiredPartial
		}
	}
	v.ShowProgress = inv.Status == StatusNew && seen.IsPositive()
	v.ShowReceipt = inv.Status == StatusProcessing || inv.Status == StatusSettled || v.Final && len(inv.Payments) > 0
	v.ShowID = v.Final || inv.Exception != ExceptionNone && inv.Exception != ExceptionPaidPartial

	v.ShowPay = v.Phase == PhasePay && inv.Due.IsPositive() && inv.AddressIn != ""
	if v.ShowPay {
		v.Due = inv.Due.String()
		v.DueText = s.number(v.Due)
		if inv.Currency != "" {
			v.DueFiat = fill(s.FiatLabel, "{amount}", s.money(inv.DueFiat, inv.Currency))
		}
		v.MinimumNote = fill(s.MinimumNote, "{min}", s.number(inv.Minimum.String()), "{symbol}", sym)
		if v.Network != "" {
			v.NetworkNote = fill(s.NetworkNote, "{symbol}", sym, "{network}", v.Network)
		}
		v.PaymentURI = safeWalletLink(inv.PaymentURI)
		vq := fmt.Sprintf("?v=%d", inv.Version)
		if v.PaymentURI != "" {
			v.QRURL = inv.ID + "/" + PageQRPath + vq
			v.QRAlt = fill(s.QRAlt, "{amount}", v.DueText, "{symbol}", sym, "{address}", inv.AddressIn)
		}
		v.QRAddressURL = inv.ID + "/" + PageQRAddressPath + vq
		v.QRAddressAlt = fill(s.QRAddressAlt, "{address}", inv.AddressIn)
		if inv.QuoteExpiresAt.Before(inv.ExpiresAt) {
			v.QuoteSeconds, v.QuoteLeft = left(now, inv.QuoteExpiresAt)
		}
		if canSwitch(inv) {
			v.ChooseURL = inv.ID + "?lang=" + lang + "&choose=1"
		}
	}
	if v.ShowPay || v.ShowChoose {
		v.ExpirySeconds, v.ExpiryLeft = left(now, inv.ExpiresAt)
		v.ExpiryTotal = int64(inv.ExpiresAt.Sub(inv.CreatedAt) / time.Second)
	}
	if h.cfg.returnURL != nil && (v.Final || v.Phase == PhaseProcessing) {
		v.ReturnURL = safeReturnLink(h.cfg.returnURL(inv.Clone()))
	}
	v.ShowReturn = v.ReturnURL != ""

	at := inv.CreatedAt
	if inv.Status == StatusSettled {
		for _, rc := range inv.Payments {
			if !rc.WrongCoin && rc.ConfirmedAt.After(at) {
				at = rc.ConfirmedAt
			}
		}
	}
	v.Date, v.DateTime = s.date(at), at.UTC().Format(time.RFC3339)
	for _, rc := range inv.Payments {
		v.Payments = append(v.Payments, PagePayment{
			Amount: s.coinAmount(rc.Amount, symbol(rc.Coin)), Value: rc.Amount.String(), TxID: rc.TxID,
			Confirmed: rc.Confirmed, Late: rc.Late, WrongCoin: rc.WrongCoin,
			Date: s.date(rc.SeenAt), DateTime: rc.SeenAt.UTC().Format(time.RFC3339),
		})
	}
	return v
}

// language is the page's language for r: its lang parameter, else its
// Accept-Language, else the page's default.
func (h *pageHandler) language(r *http.Request) *PageStrings {
	return &h.cfg.langs[negotiate(h.cfg.langs, r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"), h.def)]
}
