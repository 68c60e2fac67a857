package invoice

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// PhaseChoose: the invoice waits for the customer to choose a coin, or
// the customer asked to switch (the page's "?choose=1"): the page lists
// the coins as a form.
const PhaseChoose = "choose"

// PageChoosePath follows "<ID>/" for the picker's form: a POST with the
// chosen coin in the field "coin" (Desk.Choose), answered with 303 See
// Other to the page.
const PageChoosePath = "choose"

// maxChooseForm bounds the body of a choice: a ticker and little else.
const maxChooseForm = 1 << 10

// PageCoin is one coin of the page's picker (PageView.Coins).
type PageCoin struct {
	// Ticker is what the form posts ("trc20_usdt"); Name the coin's name
	// as the service gives it; Network the token's network ("TRC20", ""
	// for a native coin); Symbol its short name ("USDT").
	Ticker  string `json:"ticker"`
	Name    string `json:"name"`
	Network string `json:"network"`
	Symbol  string `json:"symbol"`
	// Amount is what the invoice asks in the coin now, for the language
	// with its symbol ("0,00041667 BTC"), "" while the quotes are being
	// renewed; Value the same, exact.
	Amount string `json:"amount"`
	Value  string `json:"value"`
	// Current is true for the coin chosen last.
	Current bool `json:"current"`
	// Badge is the letter the page draws for the coin.
	Badge string `json:"badge"`
}

// pageAsk is what the customer asked of the page beside the invoice: the
// picker to switch coin, and whether a choice just failed.
type pageAsk struct {
	picking, failed bool
}

// askOf reads the picker's query parameters.
func askOf(r *http.Request) pageAsk {
	q := r.URL.Query()
	return pageAsk{picking: q.Get("choose") == "1", failed: q.Get("failed") == "1"}
}

// query is the part of the page's URLs that keeps what was asked.
func (a pageAsk) query() string {
	q := ""
	if a.picking {
		q += "&choose=1"
	}
	if a.failed {
		q += "&failed=1"
	}
	return q
}

// canSwitch reports whether the page offers the customer another coin
// now.
func canSwitch(inv *Invoice) bool {
	return inv.Status == StatusNew && len(inv.Coins) > 1 && choices(inv) < MaxChoices
}

// choosing reports whether the page shows the picker.
func choosing(inv *Invoice, a pageAsk) bool {
	return inv.Status == StatusNew && len(inv.Coins) > 0 && (inv.Ticker == "" || a.picking && canSwitch(inv))
}

// pickerView fills the picker's part of v, in phase PhaseChoose.
func pickerView(v *PageView, inv *Invoice, now time.Time, s *PageStrings, a pageAsk) {
	lang := primary(s.Lang)
	v.ShowChoose = true
	v.Headline, v.Detail = s.Choose, s.ChooseNote
	if inv.Ticker != "" {
		v.Detail = s.SwitchNote
		v.BackURL = inv.ID + "?lang=" + lang
	}
	if a.failed {
		v.Detail = s.ChooseFailed
	}
	v.ChooseAction = inv.ID + "/" + PageChoosePath + "?lang=" + lang
	stale := quoteDue(inv, now)
	for _, c := range inv.Coins {
		sym := symbol(c.Ticker)
		pc := PageCoin{Ticker: c.Ticker, Name: plainText(c.CoinName, 80), Network: networkName(c.Network), Symbol: sym,
			Current: c.Ticker == inv.Ticker, Badge: badge(sym)}
		if pc.Name == "" {
			pc.Name = sym
		}
		if !stale && c.Due.IsPositive() {
			pc.Amount, pc.Value = pickerAmount(c.Due, sym, s), c.Due.String()
		}
		v.Coins = append(v.Coins, pc)
	}
}

// pickerPlaces is how many decimal places the picker shows of an amount:
// enough for every coin's smallest useful unit; the page asking for the
// coin chosen shows the exact amount.
const pickerPlaces = 8

// pickerAmount writes due for the picker: exact when it has at most
// pickerPlaces decimal places, else rounded up to them, after "≈".
func pickerAmount(due decimal.Decimal, sym string, s *PageStrings) string {
	shown := due.RoundUp(pickerPlaces)
	if shown.Equal(due) {
		return s.coinAmount(due, sym)
	}
	return "≈\u00a0" + s.coinAmount(shown, sym)
}

// badge is the letter drawn for a coin: its symbol's first, or the
// letter its own sign is made of.
func badge(sym string) string {
	switch sym {
	case "ETH":
		return "Ξ"
	case "LTC":
		return "Ł"
	case "USDT":
		return "₮"
	case "DOGE":
		return "Ð"
	case "":
		return "?"
	}
	return sym[:1]
}

// choose answers the picker's form: it makes the coin the invoice's
// (Desk.Choose) and sends the browser back to the page (303 See Other),
// which shows where the invoice stands: paid or ended meanwhile, the new
// coin, or, when the service failed, the picker saying so. A coin the
// invoice does not offer is refused (400); an unknown ID is the page's
// 404. (ServeHTTP refuses a POST from another site before, as for the
// claim page's form.)
func (h *pageHandler) choose(w http.ResponseWriter, r *http.Request, id string) {
	securityHeaders(w.Header(), basePolicy)
	if !pageID(id) {
		notFound(w)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxChooseForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	lang := primary(h.language(r).Lang)
	back := "../" + id + "?lang=" + lang
	_, err := h.d.Choose(r.Context(), id, r.PostForm.Get("coin"))
	switch {
	case err == nil, errors.Is(err, ErrNotNotified), errors.Is(err, ErrWrongStatus), errors.Is(err, ErrTooManyChoices):
		// Chosen, or the page shows why not (paid or ended meanwhile).
	case errors.Is(err, ErrNotFound):
		notFound(w)
		return
	case errors.Is(err, ErrCoinNotOffered):
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	default:
		h.d.logError(r.Context(), "payment page: coin not chosen", id, err)
		back += "&choose=1&failed=1"
	}
	w.Header().Set("Location", back)
	w.WriteHeader(http.StatusSeeOther)
}

// formAction is a page's form-action policy: its own origin while it
// shows a form (the picker, the claim page's address), none otherwise.
func formAction(form bool) string {
	if form {
		return "'self'"
	}
	return "'none'"
}

// receivedText is what arrived in each coin the customer chose, in the
// order first paid ("0,125 LTC + 0,00025 BTC"), for the language.
func receivedText(inv *Invoice, s *PageStrings) string {
	var coins []string
	sums := map[string]decimal.Decimal{}
	for _, rc := range inv.Payments {
		if rc.WrongCoin {
			continue
		}
		if _, ok := sums[rc.Coin]; !ok {
			coins = append(coins, rc.Coin)
		}
		sums[rc.Coin] = sums[rc.Coin].Add(rc.Amount)
	}
	if len(coins) == 0 {
		return s.coinAmount(decimal.Zero, symbol(inv.Ticker))
	}
	parts := make([]string, len(coins))
	for i, c := range coins {
		parts[i] = s.coinAmount(sums[c], symbol(c))
	}
	return strings.Join(parts, " + ")
}
