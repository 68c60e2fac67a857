package cryptapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// maxCreateRequest is the longest create request, in characters of the
// full request URL.
const maxCreateRequest = 8192

// Error messages shared by several operations.
const (
	msgNoKey       = "API Key is required"
	msgBadKey      = "Invalid API Key"
	msgKeyOnly     = "This endpoint requires an API Key: sign up and create one in the dashboard"
	msgUnknownCoin = "Coin not supported"
	msgNotFound    = "Not found"
	msgNoLogs      = "No request or no payment callbacks found"
)

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		writeError(w, http.StatusServiceUnavailable, "server closed")
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	s.route(sw, r)
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Status: sw.status,
	})
	s.requests = trimFront(s.requests, s.history)
	s.mu.Unlock()
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"status":"error","error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers the service's error shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"status": "error", "error": msg})
}

// op is one routed operation.
type op struct {
	name    string // create, logs, info, qrcode, convert, estimate, payout, bulk, ...
	ticker  string // path form, "" for ticker-less operations
	method  string
	keyOnly bool // needs an API key in both forms
	public  bool // answered without a key in the API-key form too
}

// resolve maps a path to an operation. Every path ends in a slash.
func resolve(path string) (op, string, bool) {
	if !strings.HasPrefix(path, "/") || !strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return op{}, "", false
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if o, ok, handled := resolvePayout(segs); handled {
		return o, "", ok
	}
	get := http.MethodGet
	switch strings.Join(segs, "/") {
	case "info":
		return op{name: "allinfo", method: get, public: true}, "", true
	case "pubkey":
		return op{name: "pubkey", method: get, public: true}, "", true
	case "convert":
		return op{name: "convertfree", method: get, public: true}, "", true
	case "checkout/request":
		return op{name: "checkout", method: get, keyOnly: true}, "", true
	case "checkout/logs":
		return op{name: "checkoutlogs", method: get, keyOnly: true}, "", true
	case "deposit/request":
		return op{name: "deposit", method: get, keyOnly: true}, "", true
	case "deposit/logs":
		return op{name: "depositlogs", method: get, keyOnly: true}, "", true
	}
	if len(segs) == 2 && segs[0] == "pay" && segs[1] != "" {
		return op{name: "paypage", method: get}, segs[1], true
	}
	n := len(segs)
	if n >= 4 && segs[n-3] == "payout" && segs[n-2] == "request" {
		tk := strings.Join(segs[:n-3], "/")
		switch segs[n-1] {
		case "create":
			return op{name: "payout", ticker: tk, method: get, keyOnly: true}, "", n <= 5
		case "bulk":
			return op{name: "bulk", ticker: tk, method: http.MethodPost, keyOnly: true}, "", n <= 5
		}
		return op{}, "", false
	}
	if n < 2 || n > 3 {
		return op{}, "", false
	}
	switch segs[n-1] {
	case "create", "logs":
		return op{name: segs[n-1], ticker: strings.Join(segs[:n-1], "/"), method: get}, "", true
	case "info", "qrcode", "convert", "estimate":
		return op{name: segs[n-1], ticker: strings.Join(segs[:n-1], "/"), method: get, public: true}, "", true
	}
	return op{}, "", false
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	o, arg, ok := resolve(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, msgNotFound)
		return
	}
	if r.Method != o.method {
		w.Header().Set("Allow", o.method)
		writeError(w, http.StatusMethodNotAllowed, "Method "+r.Method+" not allowed")
		return
	}
	if o.name == "paypage" {
		s.handlePayPage(w, r, arg)
		return
	}
	q := r.URL.Query()
	if !s.authorize(w, q, o) {
		return
	}
	var c *Coin
	var key string
	if o.ticker != "" {
		t, err := parseTicker(o.ticker)
		if err == nil {
			c, key = s.coins[t.Key()], t.Key()
		}
		if c == nil {
			writeError(w, http.StatusNotFound, msgUnknownCoin)
			return
		}
	}
	switch o.name {
	case "create":
		s.handleCreate(w, r, c, key)
	case "logs":
		s.handleLogs(w, q, key)
	case "info":
		s.handleInfo(w, q, c, key)
	case "allinfo":
		s.handleAllInfo(w, q)
	case "qrcode":
		s.handleQRCode(w, q, c)
	case "convert":
		s.handleConvert(w, q, key)
	case "convertfree":
		s.handleConvertFree(w, q)
	case "estimate":
		s.handleEstimate(w, q, c)
	case "pubkey":
		writeJSON(w, http.StatusOK, map[string]string{"status": "success", "pubkey": s.pubPEM})
	case "checkout":
		s.handleCheckout(w, r, q, false)
	case "deposit":
		s.handleCheckout(w, r, q, true)
	case "checkoutlogs":
		s.handleCheckoutLogs(w, q, false)
	case "depositlogs":
		s.handleCheckoutLogs(w, q, true)
	case "payout":
		s.handlePayout(w, q, c, key)
	case "bulk":
		s.handleBulkPayout(w, r, c, key)
	default:
		s.routePayout(w, r, o.name, c, key)
	}
}

// authorize applies the API-key rules of the server's form. It answers
// the error itself and returns false when the request may not go on. In
// the API-key form the public reads (coin info, QR code, convert,
// estimate, public key) are answered without a key, as the service
// answers its own libraries; a key that is sent must be the right one.
func (s *Server) authorize(w http.ResponseWriter, q url.Values, o op) bool {
	if s.apiKey == "" {
		if o.keyOnly {
			writeError(w, http.StatusUnauthorized, msgKeyOnly)
			return false
		}
		return true
	}
	switch k := q.Get("apikey"); {
	case k == "" && o.public && !q.Has("apikey"):
		return true
	case k == "":
		writeError(w, http.StatusUnauthorized, msgNoKey)
		return false
	case k != s.apiKey:
		writeError(w, http.StatusUnauthorized, msgBadKey)
		return false
	}
	return true
}

// flag reads a 0/1 parameter.
func flag(q url.Values, name string) (bool, error) {
	v, err := wire.ParseBool(q.Get(name))
	if err != nil {
		return false, fmt.Errorf("%s must be 0 or 1", name)
	}
	return v, nil
}

// validCallbackURL accepts absolute http(s) URLs.
func validCallbackURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.ContainsAny(s, " \t\r\n")
}

func num(d decimal.Decimal) json.Number { return json.Number(d.String()) }

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request, c *Coin, key string) {
	if n := len("http://" + r.Host + r.URL.RequestURI()); n > maxCreateRequest {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Request too long: %d characters, at most %d", n, maxCreateRequest))
		return
	}
	q := r.URL.Query()
	cb := q.Get("callback")
	if cb == "" {
		writeError(w, http.StatusBadRequest, "callback is required")
		return
	}
	if !validCallbackURL(cb) {
		writeError(w, http.StatusBadRequest, "Invalid callback URL")
		return
	}
	conf := 1
	if q.Has("confirmations") {
		n, err := wire.ParseInt(q.Get("confirmations"))
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "confirmations must be a number of at least 1")
			return
		}
		conf = n
	}
	var flags [6]bool
	for i, name := range []string{"pending", "post", "json", "convert", "multi_token", "multi_chain"} {
		v, err := flag(q, name)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		flags[i] = v
	}
	priority := q.Get("priority")
	if priority == "" {
		priority = "default"
	}
	if !c.priorityAllowed(priority) {
		writeError(w, http.StatusBadRequest, "Invalid priority for "+key+": allowed are "+strings.Join(c.Priorities, ", "))
		return
	}
	addr := q.Get("address")
	var outs []output
	if addr == "" {
		if s.apiKey == "" {
			writeError(w, http.StatusBadRequest, "address is required")
			return
		}
	} else {
		var err error
		if outs, err = parseOutputs(c.Chain, addr); err != nil {
			writeError(w, http.StatusBadRequest, "Invalid address: "+err.Error())
			return
		}
	}

	s.mu.Lock()
	st, ok := s.setups[key+"\x00"+cb]
	if !ok {
		if outs == nil {
			// The API-key form without an address: the dashboard's address for the
			// coin, one per server and coin.
			outs = []output{{addr: s.dashboardAddressLocked(key, c), share: decimal.NewFromInt(1)}}
		}
		st = &setup{
			coin: c, tickerKey: key, callback: cb, outputs: outs, addressOut: addressOutText(outs),
			notifyPending: flags[0], confirmations: conf, post: flags[1], json: flags[2], convert: flags[3],
			priority: priority, email: q.Get("email"), multiToken: flags[4],
		}
		st.addressIn = s.newAddressLocked(c.Chain)
		s.setups[key+"\x00"+cb] = st
		s.byAddress[key+"\x00"+st.addressIn] = st
		s.setupOrder = append(s.setupOrder, st)
		s.trimSetupsLocked()
	}
	resp := map[string]any{
		"status":                   "success",
		"address_in":               st.addressIn,
		"address_out":              st.addressOut,
		"callback_url":             st.callback,
		"priority":                 st.priority,
		"minimum_transaction_coin": num(c.minimumFor(len(st.outputs))),
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

// dashboardAddressLocked is the destination of API-key form creates without an
// address.
func (s *Server) dashboardAddressLocked(key string, c *Coin) string {
	if a, ok := s.dashboard[key]; ok {
		return a
	}
	a := s.newAddressLocked(c.Chain)
	s.dashboard[key] = a
	return a
}

func (s *Server) handleLogs(w http.ResponseWriter, q url.Values, key string) {
	cb := q.Get("callback")
	if cb == "" {
		writeError(w, http.StatusBadRequest, "callback is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.setups[key+"\x00"+cb]
	if !ok {
		// An unknown callback URL; the real service answers this one with
		// HTTP 200. A known address without payments answers success with
		// "callbacks": [], as the service's published samples show.
		writeError(w, http.StatusOK, msgNoLogs)
		return
	}
	items := make([]map[string]any, 0, len(st.payments))
	for _, p := range st.payments {
		items = append(items, p.logItem())
	}
	// In the order of the service's documentation: the callbacks last,
	// which lets clients stream them.
	writeJSON(w, http.StatusOK, logsAnswer{
		AddressIn:           st.addressIn,
		AddressOut:          st.addressOut,
		CallbackURL:         st.callback,
		Status:              "success",
		NotifyPending:       st.notifyPending,
		NotifyConfirmations: st.confirmations,
		Priority:            st.priority,
		Callbacks:           items,
	})
}

// logsAnswer is the logs answer, its fields in the documented order.
type logsAnswer struct {
	AddressIn           string           `json:"address_in"`
	AddressOut          string           `json:"address_out"`
	CallbackURL         string           `json:"callback_url"`
	Status              string           `json:"status"`
	NotifyPending       bool             `json:"notify_pending"`
	NotifyConfirmations int              `json:"notify_confirmations"`
	Priority            string           `json:"priority"`
	Callbacks           []map[string]any `json:"callbacks"`
}

// logItem is the payment as the logs show it.
func (p *payment) logItem() map[string]any {
	c := p.coin
	logs := make([]map[string]any, 0, len(p.logs))
	for _, l := range p.logs {
		status := ""
		if l.status != 0 {
			status = fmt.Sprint(l.status)
		}
		logs = append(logs, map[string]any{
			"request_url":     l.requestURL,
			"responses":       l.response,
			"response_status": status,
			"next_try":        logTime(l.nextTry),
			"pending":         l.pending,
			"confirmed":       !l.pending,
		})
	}
	return map[string]any{
		"uuid":                 p.uuid,
		"txid_in":              p.txidIn,
		"txid_out":             p.txidOut,
		"value":                num(c.smallest(p.value)),
		"value_coin":           num(p.value),
		"value_forwarded":      num(c.smallest(p.forwarded)),
		"value_forwarded_coin": num(p.forwarded),
		"confirmations":        p.confirmations,
		"last_update":          logTime(p.lastUpdate),
		"result":               p.result,
		"fee_percent":          num(c.FeePercent),
		"fee":                  num(c.smallest(p.fee)),
		"fee_coin":             num(p.fee),
		"prices":               num(p.price),
		"logs":                 logs,
	}
}

// logoURL is the logo address of a coin, on the service's media host.
func logoURL(key string) string {
	return "https://api.cryptapi.io/media/token_logos/" + strings.ReplaceAll(key, "_", "/") + ".png"
}

// coinRecord is a coin's info record.
func (s *Server) coinRecord(c *Coin, key string, withPrices, single bool) map[string]any {
	minTx := c.smallest(c.MinimumTransaction)
	// The published samples write minimum_transaction and minimum_fee as
	// numbers and the coin amounts as text.
	rec := map[string]any{
		"coin":                     c.Name,
		"logo":                     logoURL(key),
		"ticker":                   key,
		"minimum_transaction":      num(minTx),
		"minimum_transaction_coin": c.MinimumTransaction.String(),
		"minimum_fee":              num(c.smallest(c.MinimumFee)),
		"minimum_fee_coin":         c.MinimumFee.String(),
		"fee_percent":              c.FeePercent.StringFixed(3),
		"network_fee_estimation":   c.NetworkFee.String(),
	}
	if single {
		rec["status"] = "success"
	}
	if withPrices {
		prices := s.prices(c)
		p := make(map[string]string, len(prices))
		for k, v := range prices {
			p[k] = v.String()
		}
		rec["prices"] = p
		rec["prices_updated"] = s.started.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return rec
}

func wantPrices(q url.Values) bool { return q.Get("prices") != "0" }

func (s *Server) handleInfo(w http.ResponseWriter, q url.Values, c *Coin, key string) {
	writeJSON(w, http.StatusOK, s.coinRecord(c, key, wantPrices(q), true))
}

// handleAllInfo answers every coin: native coins under their ticker,
// tokens under their network, and a "fee_tiers" entry that is no coin.
func (s *Server) handleAllInfo(w http.ResponseWriter, q url.Values) {
	out := map[string]any{}
	for key, c := range s.coins {
		t, _ := parseTicker(key)
		rec := s.coinRecord(c, key, wantPrices(q), false)
		if t.Network == "" {
			out[key] = rec
			continue
		}
		nw, _ := out[t.Network].(map[string]any)
		if nw == nil {
			nw = map[string]any{}
			out[t.Network] = nw
		}
		nw[t.Coin] = rec
	}
	out["fee_tiers"] = []map[string]string{
		{"minimum": "0", "fee_percent": "1.000"},
		{"minimum": "10000", "fee_percent": "0.750"},
		{"minimum": "100000", "fee_percent": "0.500"},
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleQRCode(w http.ResponseWriter, q url.Values, c *Coin) {
	addr := q.Get("address")
	if addr == "" {
		writeError(w, http.StatusBadRequest, "address is required")
		return
	}
	if !validAddress(c.Chain, addr) {
		writeError(w, http.StatusBadRequest, "Invalid address for this coin")
		return
	}
	var value decimal.Decimal
	if q.Get("value") != "" {
		v, err := wire.ParseDecimal(q.Get("value"))
		if err != nil || !v.IsPositive() {
			writeError(w, http.StatusBadRequest, "value must be a positive number")
			return
		}
		value = v
	}
	size := 512
	if q.Get("size") != "" {
		n, err := wire.ParseInt(q.Get("size"))
		if err != nil || n < 64 || n > 1024 {
			writeError(w, http.StatusBadRequest, "size must be between 64 and 1024")
			return
		}
		size = n
	}
	uri := paymentURI(c, addr, value)
	img, err := qrPNG(uri, size)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "could not make the QR code")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"status": "success", "qr_code": img, "payment_uri": uri,
	})
}

// rate returns how many units of to one unit of from is worth, as the
// fraction num/den so that conversions divide once, exactly. Codes are
// fiat currencies or coin tickers; ok is false for an unknown code or a
// pair without prices.
func (s *Server) rate(from, to string) (num, den decimal.Decimal, ok bool) {
	fc, fiatFrom := s.resolveCode(from)
	tc, fiatTo := s.resolveCode(to)
	switch {
	case fc != nil && tc != nil:
		num, den = s.prices(fc)["USD"], s.prices(tc)["USD"]
	case fiatFrom != "" && tc != nil:
		num, den = decimal.NewFromInt(1), s.prices(tc)[fiatFrom]
	case fc != nil && fiatTo != "":
		num, den = s.prices(fc)[fiatTo], decimal.NewFromInt(1)
	case fiatFrom != "" && fiatTo != "":
		for _, k := range s.Tickers() {
			c := s.coins[k]
			if a, b := s.prices(c)[fiatFrom], s.prices(c)[fiatTo]; !a.IsZero() && !b.IsZero() {
				num, den = b, a
				break
			}
		}
	}
	if num.IsZero() || den.IsZero() {
		return decimal.Zero, decimal.Zero, false
	}
	return num, den, true
}

// resolveCode finds a coin ("btc", "trc20_usdt", "trc20/usdt", or a bare
// token such as "usdt") or a fiat code the server has prices in.
func (s *Server) resolveCode(code string) (*Coin, string) {
	code = strings.TrimSpace(code)
	if t, err := parseTicker(code); err == nil {
		if c, ok := s.coins[t.Key()]; ok {
			return c, ""
		}
		if t.Network == "" {
			for _, k := range s.Tickers() {
				if kt, _ := parseTicker(k); kt.Coin == t.Coin {
					return s.coins[k], ""
				}
			}
		}
	}
	up := strings.ToUpper(code)
	for _, c := range s.coins {
		if _, ok := s.prices(c)[up]; ok {
			return nil, up
		}
	}
	return nil, ""
}

// convertValue converts and rounds to the target's precision: the coin's
// decimals, or 2 for fiat.
func (s *Server) convertValue(w http.ResponseWriter, from, to string, q url.Values) (decimal.Decimal, decimal.Decimal, bool) {
	v, err := wire.ParseDecimal(q.Get("value"))
	if q.Get("value") == "" || err != nil || !v.IsPositive() {
		writeError(w, http.StatusBadRequest, "value must be a positive number")
		return decimal.Zero, decimal.Zero, false
	}
	if from == "" {
		writeError(w, http.StatusBadRequest, "from is required")
		return decimal.Zero, decimal.Zero, false
	}
	num, den, ok := s.rate(from, to)
	if !ok {
		writeError(w, http.StatusBadRequest, "Conversion not supported")
		return decimal.Zero, decimal.Zero, false
	}
	places := int32(2)
	if c, _ := s.resolveCode(to); c != nil {
		places = c.Decimals
	}
	return v.Mul(num).DivRound(den, places), num.DivRound(den, 16), true
}

func (s *Server) handleConvert(w http.ResponseWriter, q url.Values, key string) {
	v, r, ok := s.convertValue(w, q.Get("from"), key, q)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"status": "success", "value_coin": v.String(), "exchange_rate": r.String(),
	})
}

func (s *Server) handleConvertFree(w http.ResponseWriter, q url.Values) {
	to := q.Get("to")
	if to == "" {
		writeError(w, http.StatusBadRequest, "to is required")
		return
	}
	v, r, ok := s.convertValue(w, q.Get("from"), to, q)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"status": "success", "value_coin": v.String(), "exchange_rate": r.String(),
	})
}

// priorityFactor scales the network fee by priority.
var priorityFactor = map[string]string{"economic": "0.8", "default": "1", "fast": "1.5", "fastest": "2"}

func (s *Server) handleEstimate(w http.ResponseWriter, q url.Values, c *Coin) {
	n := 1
	if q.Get("addresses") != "" {
		v, err := wire.ParseInt(q.Get("addresses"))
		if err != nil || v < 1 || v > maxOutputs {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("addresses must be between 1 and %d", maxOutputs))
			return
		}
		n = v
	}
	priority := q.Get("priority")
	if priority == "" {
		priority = "default"
	}
	if !c.priorityAllowed(priority) {
		writeError(w, http.StatusBadRequest, "Invalid priority: allowed are "+strings.Join(c.Priorities, ", "))
		return
	}
	f := decimal.NewFromInt(1)
	if x, ok := priorityFactor[priority]; ok {
		f = decimal.RequireFromString(x)
	}
	// Each destination beyond the first adds half the cost of one.
	outs := decimal.NewFromInt(int64(n + 1)).Div(decimal.NewFromInt(2))
	cost := c.NetworkFee.Mul(outs).Mul(f).Round(c.Decimals)
	prices := s.prices(c)
	codes := make([]string, 0, len(prices))
	for k := range prices {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	fiat := make(map[string]string, len(codes))
	for _, k := range codes {
		fiat[k] = cost.Mul(prices[k]).Round(6).String()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"status": "success", "estimated_cost": cost.String(), "estimated_cost_currency": fiat,
	})
}
