package invoice

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/address"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// claimPageView is what the claim page shows of a refund, written for the
// page's language, from one function. The page never shows the
// merchant's reason, the invoice or the order.
type claimPageView struct {
	Status   RefundStatus
	Title    string // the page's title
	Merchant string // the shop's name (WithMerchantName)
	Headline string
	Detail   string
	// Amount is what is given back, with its coin ("0,00058333 BTC");
	// Fiat its value ("≈ 34,99 €"), "" when the refund has no fiat value.
	Amount   string
	Fiat     string
	CoinName string
	Network  string
	Address  string // where it goes, once set
	TxID     string // once sent
	// ShowForm: the page asks for an address (the refund awaits one),
	// with InputLabel, InputHint and Expires (until when the link
	// waits).
	ShowForm   bool
	InputLabel string
	InputHint  string
	Expires    string
	// Error says why the address sent was refused; Input is that address,
	// to correct.
	Error string
	Input string
	// PageURL is the page's own link, relative to it, in its language.
	PageURL string
}

// claimPageData is what the claim page's template is executed with.
type claimPageData struct {
	View claimPageView
	// S holds the texts of the page's language; Langs the language switch.
	S     PageStrings
	Langs []PageLanguage
	// CSSURL is the payment page's stylesheet (the claim page's rules are
	// in it, and WithPageCSS applies to both); LogoURL, LogoWidth and
	// LogoHeight the shop's logo, as on the payment page.
	CSSURL, LogoURL       string
	LogoWidth, LogoHeight int
}

var claimTemplate = template.Must(template.ParseFS(pageAssets, "pageassets/claim.html"))

// claimToken reports whether s has the form of a claim token (rand.Text,
// like an invoice ID).
func claimToken(s string) bool { return pageID(s) }

// claim serves the claim page of token: GET and HEAD show it, POST sets
// the address. A token that names no refund, or a refund that no longer
// waits (cancelled, its link expired), answers the same 404 as an
// unknown invoice.
func (h *pageHandler) claim(w http.ResponseWriter, r *http.Request, token string) {
	valid := claimToken(token)
	lookup := token
	if !valid {
		lookup = probeID
	}
	rec, err := h.d.store.LoadByKey(r.Context(), lookup)
	switch {
	case err == nil && valid:
	case err == nil || errors.Is(err, ErrNotFound):
		notFound(w)
		return
	default:
		h.d.logError(r.Context(), "claim page: refund not read", "", err)
		securityHeaders(w.Header(), basePolicy)
		http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
		return
	}
	s := h.language(r)
	self := token + "?lang=" + primary(s.Lang)
	inv := rec.Invoice.AsOf(h.d.now())
	var rf *Refund
	for _, wk := range rec.refunds {
		if wk.Token == token {
			for i := range inv.Refunds {
				if inv.Refunds[i].ID == wk.ID {
					rf = &inv.Refunds[i]
				}
			}
		}
	}
	if rf == nil || rf.Status == RefundCancelled {
		notFound(w)
		return
	}
	status := http.StatusOK
	var input, problem string
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if err := r.ParseForm(); err != nil {
			securityHeaders(w.Header(), basePolicy)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		input = strings.TrimSpace(r.PostForm.Get("address"))
		_, err := h.d.SetRefundAddress(r.Context(), rf.ID, input)
		switch {
		case err == nil || errors.Is(err, ErrNotNotified):
			// Stored: show it as it stands (a reload does not post again).
			securityHeaders(w.Header(), basePolicy)
			w.Header().Set("Location", self)
			w.WriteHeader(http.StatusSeeOther)
			return
		case errors.Is(err, ErrInvalidOptions):
			status, problem = http.StatusUnprocessableEntity, addressProblem(s, rf, input, claimVars(inv, rf))
		case errors.Is(err, ErrWrongStatus):
			status, problem, input = http.StatusConflict, s.RefundSetAlready, ""
		default:
			h.d.logError(r.Context(), "claim page: address not stored", rec.ID(), err)
			securityHeaders(w.Header(), basePolicy)
			http.Error(w, "temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
		// The refund as it stands now.
		if cur, err := h.d.store.Load(r.Context(), rec.ID()); err == nil {
			inv = cur.Invoice.AsOf(h.d.now())
			for i := range inv.Refunds {
				if inv.Refunds[i].ID == rf.ID {
					rf = &inv.Refunds[i]
				}
			}
		}
	}
	v := h.claimView(inv, rf, s, self)
	v.Error, v.Input = problem, input
	if !v.ShowForm {
		v.Input = ""
	}
	data := claimPageData{View: v, S: *s, Langs: h.languages(s), CSSURL: "../" + h.cssURL,
		LogoWidth: h.logoW, LogoHeight: h.logoH}
	if h.logoURL != "" {
		data.LogoURL = "../" + h.logoURL
	}
	var buf bytes.Buffer
	if err := claimTemplate.Execute(&buf, data); err != nil {
		h.d.logError(r.Context(), "claim page: template failed", rec.ID(), err)
		securityHeaders(w.Header(), basePolicy)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header(), pagePolicy(newNonce(), formAction(v.ShowForm)))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept-Language")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// claimView is the one function that turns a refund into what its claim
// page shows, in the language s.
func (h *pageHandler) claimView(inv *Invoice, rf *Refund, s *PageStrings, self string) claimPageView {
	t, _ := ticker.Parse(rf.Ticker)
	sym := symbol(rf.Ticker)
	vars := claimVars(inv, rf)
	v := claimPageView{Status: rf.Status, Merchant: h.cfg.merchant, Amount: s.coinAmount(rf.Amount, sym),
		CoinName: vars[1], Network: networkName(t.Network), Address: rf.Address, TxID: rf.TxID, PageURL: self}
	v.Title = s.RefundTitle
	if v.Merchant != "" {
		v.Title = fill(s.RefundFrom, "{shop}", v.Merchant)
	}
	if rf.FiatValue.IsPositive() && inv.Currency != "" {
		v.Fiat = fill(s.FiatLabel, "{amount}", s.money(rf.FiatValue, inv.Currency))
	}
	switch rf.Status {
	case RefundAwaitingAddress:
		v.Headline, v.Detail = s.RefundAwaiting, fill(s.RefundAwaitingNote, vars...)
		v.ShowForm = true
		v.InputLabel = fill(s.RefundAddressLabel, vars...)
		v.InputHint = fill(s.RefundAddressHint, vars...)
		v.Expires = fill(s.RefundExpires, "{date}", s.date(rf.ClaimExpiresAt))
	case RefundReady:
		v.Headline, v.Detail = s.RefundReady, s.RefundReadyNote
	case RefundSending:
		v.Headline, v.Detail = s.RefundSending, s.RefundSendingNote
	case RefundSent:
		v.Headline, v.Detail = s.RefundSent, s.RefundSentNote
	case RefundFailed:
		v.Headline, v.Detail = s.RefundFailed, s.RefundFailedNote
	}
	return v
}

// claimVars are the words the claim page's texts fill in for a refund:
// {coin} (the coin's name, "Bitcoin", as the invoice names its coin and
// the coins it offers, or its symbol for a coin the invoice does not
// name), {symbol} ("BTC", "USDT") and {network} (a
// token's network, "TRC20", or the coin's name for a native coin).
func claimVars(inv *Invoice, rf *Refund) []string {
	t, _ := ticker.Parse(rf.Ticker)
	sym := symbol(rf.Ticker)
	coin := sym
	if c := coinOf(inv, rf.Ticker); c != nil && c.CoinName != "" {
		coin = c.CoinName // a coin the customer chose
	} else if rf.Ticker == inv.Ticker && inv.CoinName != "" {
		coin = inv.CoinName
	}
	network := networkName(t.Network)
	if network == "" {
		network = coin
	}
	return []string{"{coin}", coin, "{symbol}", sym, "{network}", network}
}

// addressProblem says, in the language s, why input is not an address
// of the refund's coin: empty, another network's, mistyped, or not an
// address at all.
func addressProblem(s *PageStrings, rf *Refund, input string, vars []string) string {
	t, _ := ticker.Parse(rf.Ticker)
	f := address.FamilyOf(t.Network, t.Coin)
	if input == "" {
		return s.RefundEmpty
	}
	if g := address.Detect(input); g != address.Unknown && g != f {
		return fill(s.RefundWrongNetwork, append(vars, "{family}", g.String())...)
	}
	var e *address.Error
	if err := address.Check(f, input); errors.As(err, &e) && strings.Contains(e.Reason, "checksum") {
		return s.RefundTypo
	}
	return fill(s.RefundNotAddress, vars...)
}

// pagePolicy is the Content-Security-Policy of a page: a script runs
// only with the nonce, styles and images come from the page's origin, no
// framing, forms post to formAction ("'self'" while the page shows a
// form that posts to its own origin, the picker or the claim form;
// "'none'" otherwise).
func pagePolicy(nonce, formAction string) string {
	return fmt.Sprintf("default-src 'none'; script-src 'nonce-%s'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"base-uri 'none'; form-action %s; frame-ancestors 'none'", nonce, formAction)
}
