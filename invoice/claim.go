package invoice

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/address"
	"github.com/forwardpay/cryptapi-go/internal/ticker"
)

// ClaimStrings are the texts of the refund claim page, for translation,
// all in one place. In WithClaimStrings, an empty field keeps the default
// (DefaultClaimStrings). Some texts take values, written {coin}, {symbol},
// {network}, {family}, {amount} and {currency} where they go.
type ClaimStrings struct {
	Lang         string // the page's language, for <html lang>
	Title        string
	AmountLabel  string
	FiatLabel    string // "≈ {amount} {currency}"
	CoinLabel    string
	NetworkLabel string
	AddressLabel string
	TxLabel      string
	ExpiresLabel string // until when the link waits for an address
	Refresh      string

	// Headlines by the refund's status, and what the customer does next.
	AwaitingAddress, Ready, Sending, Sent, Failed string
	AwaitingDetail, ReadyDetail, SendingDetail    string
	SentDetail, FailedDetail                      string

	InputLabel string // "Your {coin} address", the form's heading
	InputHint  string // which network, and that another one loses the money
	Submit     string

	// What the customer is told when an address is refused.
	Empty        string
	WrongNetwork string // "This is a {family} address, not a {symbol} one."
	Typo         string
	NotAnAddress string
	Unsupported  string // the SDK does not know the coin's address format
	SetAlready   string
}

// DefaultClaimStrings returns the claim page's English texts.
func DefaultClaimStrings() ClaimStrings {
	return ClaimStrings{
		Lang:         "en",
		Title:        "Your refund",
		AmountLabel:  "Amount",
		FiatLabel:    "≈ {amount} {currency}",
		CoinLabel:    "Coin",
		NetworkLabel: "Network",
		AddressLabel: "To the address",
		TxLabel:      "Transaction",
		ExpiresLabel: "This link waits for your address until",
		Refresh:      "Refresh",

		AwaitingAddress: "Where should we send your refund?",
		Ready:           "Your refund will be sent to your address",
		Sending:         "Your refund is on its way",
		Sent:            "Your refund was sent",
		Failed:          "Your refund is delayed",
		AwaitingDetail:  "Enter an address of your own {coin} wallet. We send the amount below to it, once.",
		ReadyDetail:     "The shop sends it soon. Come back to this page to follow it.",
		SendingDetail:   "It reaches your wallet once the network has confirmed it.",
		SentDetail:      "Look for the transaction below in your wallet.",
		FailedDetail:    "It could not be sent yet. The shop will send it again or contact you.",

		InputLabel: "Your {coin} address",
		InputHint:  "Only an address of the {network} network: money sent to another network's address is lost. Copy it from your wallet; you cannot change it afterwards.",
		Submit:     "Send my refund to this address",

		Empty:        "Enter your address.",
		WrongNetwork: "This is a {family} address, not a {symbol} one. Enter an address of the {network} network.",
		Typo:         "This address has a mistake in it: its check digits do not match. Copy it again from your wallet.",
		NotAnAddress: "This is not a {symbol} address. Copy your address again from your wallet.",
		Unsupported:  "This page cannot take a {coin} address. Please contact the shop for your refund.",
		SetAlready:   "An address is set already for this refund, and cannot be changed.",
	}
}

// merge fills s's empty fields from def.
func (s ClaimStrings) merge(def ClaimStrings) ClaimStrings {
	out := def
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.Lang, s.Lang)
	set(&out.Title, s.Title)
	set(&out.AmountLabel, s.AmountLabel)
	set(&out.FiatLabel, s.FiatLabel)
	set(&out.CoinLabel, s.CoinLabel)
	set(&out.NetworkLabel, s.NetworkLabel)
	set(&out.AddressLabel, s.AddressLabel)
	set(&out.TxLabel, s.TxLabel)
	set(&out.ExpiresLabel, s.ExpiresLabel)
	set(&out.Refresh, s.Refresh)
	set(&out.AwaitingAddress, s.AwaitingAddress)
	set(&out.Ready, s.Ready)
	set(&out.Sending, s.Sending)
	set(&out.Sent, s.Sent)
	set(&out.Failed, s.Failed)
	set(&out.AwaitingDetail, s.AwaitingDetail)
	set(&out.ReadyDetail, s.ReadyDetail)
	set(&out.SendingDetail, s.SendingDetail)
	set(&out.SentDetail, s.SentDetail)
	set(&out.FailedDetail, s.FailedDetail)
	set(&out.InputLabel, s.InputLabel)
	set(&out.InputHint, s.InputHint)
	set(&out.Submit, s.Submit)
	set(&out.Empty, s.Empty)
	set(&out.WrongNetwork, s.WrongNetwork)
	set(&out.Typo, s.Typo)
	set(&out.NotAnAddress, s.NotAnAddress)
	set(&out.Unsupported, s.Unsupported)
	set(&out.SetAlready, s.SetAlready)
	return out
}

// WithClaimStrings sets the claim page's texts; its empty fields keep the
// defaults (DefaultClaimStrings).
func WithClaimStrings(s ClaimStrings) PageOption {
	return func(c *pageConfig) { c.claim = s.merge(c.claim) }
}

// ClaimView is what the claim page shows of a refund: display strings,
// from one function (the page never shows the merchant's reason, the
// invoice or the order).
type ClaimView struct {
	Status   RefundStatus
	Headline string
	Detail   string
	Amount   string // in the coin
	Symbol   string
	Fiat     string // FiatLabel filled in, "" when the refund has no fiat value
	CoinName string
	Network  string
	Address  string // where it goes, once set
	TxID     string // once sent
	Expires  string // until when the link waits for an address, while it does
	// ShowForm: the page asks for an address (awaiting one, in a coin
	// whose address format the SDK knows).
	ShowForm  bool
	InputHint string
	// Error says why the address sent was refused; Input is that address,
	// to correct.
	Error string
	Input string
	// PageURL is the page's own link, relative to it.
	PageURL string
}

// ClaimData is what the claim page's template is executed with.
type ClaimData struct {
	View ClaimView
	S    ClaimStrings
	// Assets is the relative path of the stylesheets ("../_/").
	Assets string
	// InputLabel is S.InputLabel filled in.
	InputLabel string
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
			w.Header().Set("Location", token)
			w.WriteHeader(http.StatusSeeOther)
			return
		case errors.Is(err, ErrInvalidOptions):
			status, problem = http.StatusUnprocessableEntity, h.addressProblem(rf, input)
		case errors.Is(err, ErrWrongStatus):
			status, problem, input = http.StatusConflict, h.cfg.claim.SetAlready, ""
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
	v := h.claimView(inv, rf, token)
	v.Error, v.Input = problem, input
	if !v.ShowForm {
		v.Input = ""
	}
	data := ClaimData{View: v, S: h.cfg.claim, Assets: "../" + PageAssetsPath,
		InputLabel: fill(h.cfg.claim.InputLabel, "{coin}", v.CoinName, "{symbol}", v.Symbol)}
	var buf bytes.Buffer
	if err := claimTemplate.Execute(&buf, data); err != nil {
		h.d.logError(r.Context(), "claim page: template failed", rec.ID(), err)
		securityHeaders(w.Header(), basePolicy)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header(), pagePolicy(newNonce(), "'self'"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// claimView is the one function that turns a refund into what its claim
// page shows.
func (h *pageHandler) claimView(inv *Invoice, rf *Refund, token string) ClaimView {
	s := h.cfg.claim
	t, _ := ticker.Parse(rf.Ticker)
	sym := symbol(rf.Ticker)
	v := ClaimView{Status: rf.Status, Amount: rf.Amount.String(), Symbol: sym, CoinName: sym,
		Network: strings.ToUpper(t.Network), Address: rf.Address, TxID: rf.TxID, PageURL: token}
	if rf.Ticker == inv.Ticker && inv.CoinName != "" {
		v.CoinName = inv.CoinName
	}
	network := v.Network
	if network == "" {
		network = v.CoinName
	}
	if rf.FiatValue.IsPositive() && inv.Currency != "" {
		v.Fiat = fill(s.FiatLabel, "{amount}", rf.FiatValue.StringFixed(2), "{currency}", inv.Currency)
	}
	vars := []string{"{coin}", v.CoinName, "{symbol}", sym, "{network}", network}
	switch rf.Status {
	case RefundAwaitingAddress:
		v.Headline, v.Detail = s.AwaitingAddress, fill(s.AwaitingDetail, vars...)
		v.Expires = rf.ClaimExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
		v.ShowForm = true
		if errors.Is(cryptapi.ValidateAddress(rf.Ticker, ""), cryptapi.ErrAddressFormatUnknown) {
			v.ShowForm, v.Detail = false, fill(s.Unsupported, vars...)
		}
		v.InputHint = fill(s.InputHint, vars...)
	case RefundReady:
		v.Headline, v.Detail = s.Ready, s.ReadyDetail
	case RefundSending:
		v.Headline, v.Detail = s.Sending, s.SendingDetail
	case RefundSent:
		v.Headline, v.Detail = s.Sent, s.SentDetail
	case RefundFailed:
		v.Headline, v.Detail = s.Failed, s.FailedDetail
	}
	return v
}

// addressProblem says, in the customer's words, why input is not an
// address of the refund's coin: empty, another network's, mistyped, or
// not an address at all.
func (h *pageHandler) addressProblem(rf *Refund, input string) string {
	s := h.cfg.claim
	t, _ := ticker.Parse(rf.Ticker)
	sym := symbol(rf.Ticker)
	network := strings.ToUpper(t.Network)
	if network == "" {
		network = sym
	}
	vars := []string{"{coin}", sym, "{symbol}", sym, "{network}", network}
	f := address.FamilyOf(t.Network, t.Coin)
	switch {
	case input == "":
		return s.Empty
	case f == address.Unknown:
		return fill(s.Unsupported, vars...)
	}
	if g := address.Detect(input); g != address.Unknown && g != f {
		return fill(s.WrongNetwork, append(vars, "{family}", g.String())...)
	}
	var e *address.Error
	if err := address.Check(f, input); errors.As(err, &e) && strings.Contains(e.Reason, "checksum") {
		return fill(s.Typo, vars...)
	}
	return fill(s.NotAnAddress, vars...)
}

// pagePolicy is the Content-Security-Policy of a page: scripts from the
// page's origin with the nonce, styles and images from it, no framing,
// forms posting to formAction ("'none'" for the payment page, "'self'"
// for the claim page).
func pagePolicy(nonce, formAction string) string {
	return fmt.Sprintf("default-src 'none'; script-src 'self' 'nonce-%s'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"base-uri 'none'; form-action %s; frame-ancestors 'none'", nonce, formAction)
}
