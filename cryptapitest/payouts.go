package cryptapitest

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/forwardpay/cryptapi-go/internal/wire"
	"github.com/shopspring/decimal"
)

// PayoutSettleTime is how long, by the server's clock, a payout stays
// "Processing" before it is "Done" with a transaction hash. Advance a
// FakeClock past it to see payouts done.
const PayoutSettleTime = time.Minute

// payoutsPerPage is the page size of the payout listings.
const payoutsPerPage = 50

// Payout states as the service writes them.
const (
	payoutCreated    = "Created"
	payoutProcessing = "Processing"
	payoutDone       = "Done"
	payoutError      = "Error"
)

// Payout request states as the service's filter names them.
const (
	requestPending    = "pending"
	requestProcessing = "processing"
	requestDone       = "done"
	requestRejected   = "rejected"
)

// msgShortBalance is the error of a payout the wallet cannot pay.
const msgShortBalance = "Insufficient balance in the payout wallet"

// ErrNoPayoutWallet is returned by FundPayoutWallet on a keyless server:
// payout wallets belong to API-key accounts.
var ErrNoPayoutWallet = errors.New("cryptapitest: payout wallets need the API-key form (WithAPIKey)")

// payoutBook is the payout state of a server: wallets, requests and
// payouts. It lives under the server's lock.
type payoutBook struct {
	wallets map[string]*payoutWallet // by ticker key
	byAddr  map[string]string        // ticker key + "\x00" + address -> ticker key
	batches []*payoutBatch
}

type payoutWallet struct {
	address string
	balance decimal.Decimal
}

// payoutBatch is a payout: one transaction paying one or more requests.
type payoutBatch struct {
	id          int
	ticker      string
	status      string
	requests    []int // indexes into s.payouts
	total       decimal.Decimal
	fee         decimal.Decimal
	from        string
	txid        string
	errText     string
	created     time.Time
	processedAt time.Time
}

// PayoutBatch is a payout as the server sees it.
type PayoutBatch struct {
	// ID is the payout id.
	ID string
	// Ticker is the coin, "btc" or "trc20_usdt".
	Ticker string
	// Status is "Created", "Processing", "Done" or "Error".
	Status string
	// RequestIDs are the ids of the payout requests it pays.
	RequestIDs []string
	// Total is the sum of the requests; Fee the service fee on top.
	Total, Fee decimal.Decimal
	// TxID is the payout transaction, once done.
	TxID string
}

// book returns the payout state, creating it on first use. s.mu must be
// held.
func (s *Server) bookLocked() *payoutBook {
	if s.po == nil {
		s.po = &payoutBook{wallets: map[string]*payoutWallet{}, byAddr: map[string]string{}}
	}
	return s.po
}

// walletLocked returns the payout wallet of a coin, creating it.
func (s *Server) walletLocked(key string, c *Coin) *payoutWallet {
	b := s.bookLocked()
	w, ok := b.wallets[key]
	if !ok {
		w = &payoutWallet{address: s.newAddressLocked(c.Chain)}
		b.wallets[key] = w
		b.byAddr[key+"\x00"+w.address] = key
	}
	return w
}

// FundPayoutWallet adds amount to the payout wallet of ticker, as a
// deposit to its address would. Payouts are paid from it; one whose total
// with fee exceeds the balance ends in "Error". It needs the API-key form.
func (s *Server) FundPayoutWallet(ticker string, amount decimal.Decimal) error {
	c, err := s.coinFor(ticker)
	if err != nil {
		return err
	}
	if !amount.IsPositive() {
		return errors.New("cryptapitest: amount must be positive")
	}
	if !amount.Equal(amount.Truncate(c.Decimals)) {
		return fmt.Errorf("cryptapitest: amount has more than %d decimals", c.Decimals)
	}
	t, _ := parseTicker(ticker)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.apiKey == "" {
		return ErrNoPayoutWallet
	}
	w := s.walletLocked(t.Key(), c)
	w.balance = w.balance.Add(amount)
	s.signalLocked()
	return nil
}

// PayoutWallet returns the address and balance of the payout wallet of
// ticker, creating the wallet on first use. It needs the API-key form.
func (s *Server) PayoutWallet(ticker string) (address string, balance decimal.Decimal, err error) {
	c, err := s.coinFor(ticker)
	if err != nil {
		return "", decimal.Zero, err
	}
	t, _ := parseTicker(ticker)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiKey == "" {
		return "", decimal.Zero, ErrNoPayoutWallet
	}
	w := s.walletLocked(t.Key(), c)
	return w.address, w.balance, nil
}

// payToWalletLocked funds a payout wallet when addressIn is its address,
// and reports whether it was.
func (s *Server) payToWalletLocked(key string, c *Coin, addressIn string, amount decimal.Decimal) (string, bool) {
	if s.po == nil {
		return "", false
	}
	if _, ok := s.po.byAddr[key+"\x00"+addressIn]; !ok {
		return "", false
	}
	w := s.po.wallets[key]
	w.balance = w.balance.Add(amount)
	txid := s.newTxIDLocked(c.Chain)
	s.signalLocked()
	return txid, true
}

// PayoutBatches returns the payouts made from payout requests, oldest
// first.
func (s *Server) PayoutBatches() []PayoutBatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.po == nil {
		return nil
	}
	s.settlePayoutsLocked(s.clock.Now())
	out := make([]PayoutBatch, 0, len(s.po.batches))
	for _, b := range s.po.batches {
		pb := PayoutBatch{ID: strconv.Itoa(b.id), Ticker: b.ticker, Status: b.status, Total: b.total, Fee: b.fee, TxID: b.txid}
		for _, i := range b.requests {
			pb.RequestIDs = append(pb.RequestIDs, s.payouts[i].ID)
		}
		out = append(out, pb)
	}
	return out
}

// settlePayoutsLocked moves payouts that have been processing for
// PayoutSettleTime to done, with a transaction hash.
func (s *Server) settlePayoutsLocked(now time.Time) {
	if s.po == nil {
		return
	}
	for _, b := range s.po.batches {
		if b.status != payoutProcessing || now.Before(b.processedAt.Add(PayoutSettleTime)) {
			continue
		}
		b.status = payoutDone
		b.txid = s.newTxIDLocked(s.coins[b.ticker].Chain)
		for _, i := range b.requests {
			s.payouts[i].Status = requestDone
		}
	}
}

// newBatchLocked makes a payout of requests (indexes into s.payouts).
func (s *Server) newBatchLocked(key string, reqs []int) *payoutBatch {
	c := s.coins[key]
	b := &payoutBatch{ticker: key, status: payoutCreated, requests: reqs, created: s.clock.Now()}
	for _, i := range reqs {
		b.total = b.total.Add(s.payouts[i].Value)
	}
	b.fee = b.total.Mul(c.FeePercent).Div(decimal.NewFromInt(100)).Round(c.Decimals)
	book := s.bookLocked()
	b.id = len(book.batches) + 1
	book.batches = append(book.batches, b)
	for _, i := range reqs {
		s.payouts[i].PayoutID = strconv.Itoa(b.id)
	}
	return b
}

// processLocked sends a created payout from the wallet, or fails it when
// the balance is short.
func (s *Server) processLocked(b *payoutBatch) {
	c := s.coins[b.ticker]
	w := s.walletLocked(b.ticker, c)
	need := b.total.Add(b.fee)
	if w.balance.LessThan(need) {
		b.status, b.errText = payoutError, msgShortBalance
		for _, i := range b.requests {
			s.payouts[i].Status = requestRejected
		}
		return
	}
	w.balance = w.balance.Sub(need)
	b.status, b.from, b.processedAt = payoutProcessing, w.address, s.clock.Now()
	for _, i := range b.requests {
		s.payouts[i].Status = requestProcessing
	}
}

// info renders a payout as payout_info.
func (s *Server) payoutInfoLocked(b *payoutBatch) map[string]any {
	reqs := map[string]string{}
	for _, i := range b.requests {
		p := s.payouts[i]
		prev, _ := decimal.NewFromString(reqs[p.Address])
		reqs[p.Address] = prev.Add(p.Value).StringFixed(18)
	}
	out := map[string]any{
		"id":              b.id,
		"status":          b.status,
		"from":            b.from,
		"requests":        reqs,
		"total_requested": b.total.String(),
		"total_with_fee":  b.total.Add(b.fee).String(),
		"total_fiat":      "",
		"fee":             b.fee.String(),
		"blockchain_fee":  0,
		"coin":            b.ticker,
		"txid":            b.txid,
		"timestamp":       logTime(b.created),
	}
	if b.errText != "" {
		out["error"] = b.errText
	}
	return out
}

// resolvePayout maps the payout paths of the current scheme to operations;
// handled is false for paths it does not know, which resolve goes on with.
func resolvePayout(segs []string) (o op, ok, handled bool) {
	post, get := http.MethodPost, http.MethodGet
	switch strings.Join(segs, "/") {
	case "payout/create":
		return op{name: "payoutcreate", method: post, keyOnly: true}, true, true
	case "payout/process":
		return op{name: "payoutprocess", method: post, keyOnly: true}, true, true
	case "payout/status":
		return op{name: "payoutstatus", method: post, keyOnly: true}, true, true
	}
	for i := 1; i <= 2 && i < len(segs); i++ {
		if segs[i] != "payout" {
			continue
		}
		tk := strings.Join(segs[:i], "/")
		switch strings.Join(segs[i+1:], "/") {
		case "request/bulk/process":
			return op{name: "bulkprocess", ticker: tk, method: post, keyOnly: true}, true, true
		case "list":
			return op{name: "payoutlist", ticker: tk, method: get, keyOnly: true}, true, true
		case "request/list":
			return op{name: "requestlist", ticker: tk, method: get, keyOnly: true}, true, true
		case "address":
			return op{name: "payoutaddress", ticker: tk, method: get, keyOnly: true}, true, true
		case "balance":
			return op{name: "payoutbalance", ticker: tk, method: get, keyOnly: true}, true, true
		}
	}
	return op{}, false, false
}

// routePayout serves the operations resolvePayout names.
func (s *Server) routePayout(w http.ResponseWriter, r *http.Request, name string, c *Coin, key string) {
	switch name {
	case "bulkprocess":
		s.handleBulkProcess(w, r, c, key)
	case "payoutlist":
		s.handlePayoutList(w, r, key)
	case "requestlist":
		s.handleRequestList(w, r, key)
	case "payoutaddress":
		s.mu.Lock()
		a := s.walletLocked(key, c).address
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"status": "success", "address": a})
	case "payoutbalance":
		s.mu.Lock()
		b := s.walletLocked(key, c).balance
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"status": "success", "balance": b.String()})
	case "payoutcreate":
		s.handlePayoutCreate(w, r)
	case "payoutprocess", "payoutstatus":
		s.handlePayoutByID(w, r, name == "payoutprocess")
	default:
		writeError(w, http.StatusNotFound, msgNotFound)
	}
}

// handleBulkProcess records the requests of the body, makes them one
// payout and sends it at once.
func (s *Server) handleBulkProcess(w http.ResponseWriter, r *http.Request, c *Coin, key string) {
	outs, ok := readBulkOutputs(w, r, c, key)
	if !ok {
		return
	}
	s.mu.Lock()
	idx := make([]int, len(outs))
	for i, o := range outs {
		s.addPayoutLocked(key, o.addr, o.v, true)
		idx[i] = len(s.payouts) - 1
	}
	b := s.newBatchLocked(key, idx)
	s.processLocked(b)
	info := s.payoutInfoLocked(b)
	s.signalLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "queued": true, "payout_info": info})
}

// formValue reads a parameter of a form POST, or of the query.
func formValue(r *http.Request, name string) string {
	if r.PostForm == nil {
		r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
		_ = r.ParseForm()
	}
	if v := r.PostForm.Get(name); v != "" {
		return v
	}
	return r.URL.Query().Get(name)
}

func (s *Server) handlePayoutCreate(w http.ResponseWriter, r *http.Request) {
	raw := formValue(r, "request_ids")
	if strings.TrimSpace(raw) == "" {
		writeError(w, http.StatusBadRequest, "request_ids is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byID := make(map[string]int, len(s.payouts))
	for i, p := range s.payouts {
		byID[p.ID] = i
	}
	var idx []int
	seen := map[int]bool{}
	key := ""
	for _, id := range strings.Split(raw, ",") {
		id = strings.TrimSpace(id)
		i, ok := byID[id]
		if !ok {
			writeError(w, http.StatusBadRequest, "Payout request not found: "+id)
			return
		}
		p := s.payouts[i]
		if p.Status != requestPending || p.PayoutID != "" || seen[i] {
			writeError(w, http.StatusBadRequest, "Payout request "+id+" is not pending or is in another payout")
			return
		}
		if key != "" && p.Ticker != key {
			writeError(w, http.StatusBadRequest, "Payout requests must be of one coin")
			return
		}
		key = p.Ticker
		seen[i] = true
		idx = append(idx, i)
	}
	b := s.newBatchLocked(key, idx)
	s.signalLocked()
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "payout_info": s.payoutInfoLocked(b)})
}

func (s *Server) handlePayoutByID(w http.ResponseWriter, r *http.Request, process bool) {
	id := strings.TrimSpace(formValue(r, "payout_id"))
	if id == "" {
		writeError(w, http.StatusBadRequest, "payout_id is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settlePayoutsLocked(s.clock.Now())
	var b *payoutBatch
	if s.po != nil {
		for _, x := range s.po.batches {
			if strconv.Itoa(x.id) == id {
				b = x
			}
		}
	}
	if b == nil {
		writeError(w, http.StatusNotFound, "Payout not found")
		return
	}
	if !process {
		writeJSON(w, http.StatusOK, map[string]any{"status": "success", "payout_info": s.payoutInfoLocked(b)})
		return
	}
	if b.status != payoutCreated {
		writeError(w, http.StatusBadRequest, "Payout "+id+" was already processed")
		return
	}
	s.processLocked(b)
	s.signalLocked()
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "queued": true})
}

// page reads the p parameter and cuts items to it; it answers the error
// itself.
func page(w http.ResponseWriter, r *http.Request, n int) (from, to, pages int, ok bool) {
	p := 1
	if v := r.URL.Query().Get("p"); v != "" {
		x, err := wire.ParseInt(v)
		if err != nil || x < 1 {
			writeError(w, http.StatusBadRequest, "p must be a page number from 1")
			return 0, 0, 0, false
		}
		p = x
	}
	pages = (n + payoutsPerPage - 1) / payoutsPerPage
	from = (p - 1) * payoutsPerPage
	if from > n {
		from = n
	}
	to = from + payoutsPerPage
	if to > n {
		to = n
	}
	return from, to, pages, true
}

func (s *Server) handlePayoutList(w http.ResponseWriter, r *http.Request, key string) {
	status := strings.ToLower(r.URL.Query().Get("status"))
	switch status {
	case "", "all", "created", "processing", "done", "error":
	default:
		writeError(w, http.StatusBadRequest, "status must be created, processing, done or error")
		return
	}
	s.mu.Lock()
	s.settlePayoutsLocked(s.clock.Now())
	var rows []map[string]any
	if s.po != nil {
		for i := len(s.po.batches) - 1; i >= 0; i-- { // newest first
			b := s.po.batches[i]
			if b.ticker != key || (status != "" && status != "all" && strings.ToLower(b.status) != status) {
				continue
			}
			info := s.payoutInfoLocked(b)
			delete(info, "requests")
			delete(info, "from")
			delete(info, "txid")
			delete(info, "blockchain_fee")
			rows = append(rows, info)
		}
	}
	s.mu.Unlock()
	from, to, pages, ok := page(w, r, len(rows))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "payouts": append([]map[string]any{}, rows[from:to]...), "num_pages": pages})
}

func (s *Server) handleRequestList(w http.ResponseWriter, r *http.Request, key string) {
	status := strings.ToLower(r.URL.Query().Get("status"))
	switch status {
	case "", "all", requestPending, requestRejected, requestProcessing, requestDone:
	default:
		writeError(w, http.StatusBadRequest, "status must be all, pending, rejected, processing or done")
		return
	}
	s.mu.Lock()
	s.settlePayoutsLocked(s.clock.Now())
	var rows []map[string]any
	for i := len(s.payouts) - 1; i >= 0; i-- {
		p := s.payouts[i]
		if p.Ticker != key || (status != "" && status != "all" && p.Status != status) {
			continue
		}
		id, _ := strconv.Atoi(p.ID)
		rows = append(rows, map[string]any{
			"id": id, "address": p.Address, "value": p.Value.String(), "status": strings.ToUpper(p.Status[:1]) + p.Status[1:],
			"coin": p.Ticker, "payout_id": p.PayoutID, "timestamp": logTime(p.At),
		})
	}
	s.mu.Unlock()
	from, to, pages, ok := page(w, r, len(rows))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "requests": append([]map[string]any{}, rows[from:to]...), "num_pages": pages})
}
