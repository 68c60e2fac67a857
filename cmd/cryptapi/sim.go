package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/shopspring/decimal"
)

// The simulator serves cryptapitest's fake of the service on a fixed
// address with one HTTP server of its own: requests under simPrefix go to
// the control endpoints, which play the customer and the blockchain, and
// every other request goes straight to the fake's Handler, so that the
// fake sees the simulator's address as its Host (hosted payment_url values
// point there). The fake's own listener, on a random loopback port, is
// left unused. The fake's delivery hook prints one line per delivery
// attempt as it is made; Flush waits for the hook, so the deliveries a
// control call causes are printed before the call is answered.
const (
	simPrefix = "/_sim/"
	// envSimURL is the old name of envBaseURL for the control commands,
	// read when envBaseURL is unset.
	envSimURL     = "CRYPTAPI_SIM_URL"
	defaultSimURL = "http://127.0.0.1:8090"
	// maxControlBody bounds control requests and answers.
	maxControlBody = 64 << 10
	// simShutdown bounds the wait for control calls in progress when
	// the simulator stops.
	simShutdown = 5 * time.Second
)

func simCmd() *command {
	return &command{
		name:    "sim",
		summary: "run a local simulator of the service (serve, pay, confirm, checkout-pay, deposit-pay, fund)",
		help: `The simulator is an in-process fake of the service, served on a fixed
address ("sim serve"), with control commands that play the customer
("sim pay", and "sim checkout-pay" and "sim deposit-pay" on hosted
pages) and the blockchain ("sim confirm"), and fund payout wallets
("sim fund"), from another terminal.`,
		subs: []*command{simServeCmd(), simPayCmd(), simConfirmCmd(), simCheckoutPayCmd(), simDepositPayCmd(), simFundCmd()},
	}
}

func simServeCmd() *command {
	return &command{
		name:     "serve",
		synopsis: "[-addr HOST:PORT] [-api-key KEY] [flags]",
		summary:  "serve the fake service and print each callback delivery",
		help: `Serves an in-process fake of the service on -addr until interrupted. It
prints its base URL, the public key its callbacks are signed with, and
then one line per callback or notification delivery attempt, as it is
made (retries included).

Point every other command at it, sim pay and sim confirm included, with
one environment variable (export CRYPTAPI_BASE_URL=http://ADDR) or the
-base-url flag, and play the customer and the blockchain with
"cryptapi sim pay" and "cryptapi sim confirm". Without -api-key the fake
is the keyless form; with it, the API-key form (checkout, deposit and
payout need it). The
payment_url of a checkout or deposit page points at the address the
request was sent to; pay such pages with "cryptapi sim checkout-pay" and
"cryptapi sim deposit-pay".

It listens on loopback only: -addr must be 127.0.0.1, ::1 or localhost
(port 0: any free port) unless -allow-remote is given.

Control endpoints, for scripts (POST, a JSON object, JSON answers; each
waits for the deliveries it causes):
  /_sim/pay           ticker, address, amount -> {"status":"success","txid":...}
  /_sim/confirm       txid, confirmations     -> {"status":"success"}
  /_sim/checkout-pay  payment_id, ticker, [amount: default the order value]
  /_sim/deposit-pay   payment_id, ticker, amount
  /_sim/fund          ticker, amount          -> {"status":"success","address":...,"balance":...}
  /_sim/flush                                 wait for due deliveries
for example: curl -H 'Content-Type: application/json' \
  -d '{"txid":"...","confirmations":1}' http://127.0.0.1:8090/_sim/confirm
They move money on the fake, which then sends correctly signed callbacks,
so they take only what a page of another site cannot send: the body must
be application/json, an Origin or Sec-Fetch-Site header, if sent, must
say same origin, and the Host must be localhost or a loopback address (with
-allow-remote: any IP address; a DNS name could be a DNS-rebinding page).`,
		noCommon: true,
		keyOnly:  true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			addr := fs.String("addr", "127.0.0.1:8090", "loopback `address` to listen on (port 0: any free port)")
			remote := fs.Bool("allow-remote", false, "allow an -addr that is not loopback (0.0.0.0, a LAN address): anyone who can reach it can move money on the fake")
			asJSON := fs.Bool("json", false, "print JSON lines instead of text")
			seed := fs.Uint64("seed", 1, "`seed` of the generated addresses and transaction hashes")
			retries := fs.String("retry-schedule", "", "comma-separated `waits` before each retry of an unacknowledged delivery, e.g. 10s,1m,5m; \"none\" for one attempt (default: the service's schedule, 1m up to 24h)")
			timeout := fs.Duration("delivery-timeout", cryptapitest.DefaultDeliveryTimeout, "bound on each delivery attempt, a `duration`")
			history := fs.Int("history", 10000, "keep the `n` most recent payments, addresses, deliveries and requests; 0 keeps everything (memory then grows with every payment)")
			return func(ctx context.Context, a *app) error {
				opts := []cryptapitest.Option{cryptapitest.WithSeed(*seed)}
				if co.apiKey != "" {
					opts = append(opts, cryptapitest.WithAPIKey(co.apiKey))
				}
				if *retries != "" {
					sched, err := parseSchedule(*retries)
					if err != nil {
						return err
					}
					opts = append(opts, cryptapitest.WithRetrySchedule(sched))
				}
				if *timeout <= 0 {
					return usagef("-delivery-timeout must be positive")
				}
				opts = append(opts, cryptapitest.WithDeliveryTimeout(*timeout))
				if *history < 0 {
					return usagef("-history must not be negative")
				}
				opts = append(opts, cryptapitest.WithHistoryLimit(*history))
				if err := checkSimAddr(*addr, *remote); err != nil {
					return err
				}
				return serveSim(ctx, a, *addr, *remote, *asJSON, opts)
			}
		},
	}
}

// parseSchedule reads -retry-schedule.
func parseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "none" {
		return []time.Duration{}, nil
	}
	var out []time.Duration
	for _, p := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, usagef("-retry-schedule must be durations such as 10s,1m,5m, or none")
		}
		out = append(out, d)
	}
	return out, nil
}

// newSimServer returns the simulator's HTTP server, with every time-out
// set: a client cannot hold a connection by sending its headers or body
// slowly, reading the answer slowly, or idling.
func newSimServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}

// sim is a running simulator.
type sim struct {
	a      *app
	fake   *cryptapitest.Server
	json   bool
	remote bool       // -allow-remote: control requests may name any interface
	mu     sync.Mutex // serializes the lines printed
}

// errRemoteAddr is the usage error of an -addr that is not loopback.
var errRemoteAddr = usageError{"-addr must be a loopback address (127.0.0.1, ::1 or localhost): " +
	"the control endpoints move money on the fake; add -allow-remote to listen on other interfaces"}

// checkSimAddr checks -addr before anything listens: HOST:PORT, and a
// loopback host unless remote.
func checkSimAddr(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("-addr must be HOST:PORT, e.g. 127.0.0.1:8090")
	}
	if !remote && !isLoopbackHost(host) {
		return errRemoteAddr
	}
	return nil
}

// isLoopbackHost reports whether host (without port or brackets) is
// localhost or a loopback IP address.
func isLoopbackHost(host string) bool {
	if asciiLower(host) == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// asciiLower lowercases ASCII letters only: a Unicode case fold could
// make another name equal to "localhost".
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// serveSim runs the simulator until ctx ends.
func serveSim(ctx context.Context, a *app, addr string, remote, asJSON bool, opts []cryptapitest.Option) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	// "localhost" is resolved by the system: check what was bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		if !remote {
			return errRemoteAddr
		}
		fmt.Fprintf(a.stderr, "cryptapi: sim serve: -allow-remote: anyone who can reach %s can create addresses and move money on the fake\n", ln.Addr())
	}
	s := &sim{a: a, json: asJSON, remote: remote}
	fake, err := newFake(append(opts, cryptapitest.WithDeliveryHook(s.printDelivery)))
	if err != nil {
		return err
	}
	defer fake.Close()
	s.fake = fake
	srv := newSimServer(s.handler())
	if err := s.banner("http://" + ln.Addr().String()); err != nil {
		return err
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), simShutdown)
	if srv.Shutdown(sctx) != nil {
		_ = srv.Close()
	}
	cancel()
	<-serveErr
	// Close waits for the delivery lines being printed; none follows.
	fake.Close()
	if !s.json {
		fmt.Fprintln(a.stderr, "cryptapi: sim serve: stopped")
	}
	return nil
}

// handler routes the control endpoints to control, and everything else,
// unchanged, to the fake.
func (s *sim) handler() http.Handler {
	fake := s.fake.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, simPrefix) {
			s.control(w, r)
			return
		}
		fake.ServeHTTP(w, r)
	})
}

// newFake starts the fake, turning its panic on bad options into an error.
func newFake(opts []cryptapitest.Option) (s *cryptapitest.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return cryptapitest.NewServer(opts...), nil
}

// banner prints where the simulator listens and its public key.
func (s *sim) banner(base string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.json {
		return s.event(map[string]any{
			"event":      "listening",
			"base_url":   base,
			"public_key": s.fake.PublicKeyPEM(),
			"api_key":    s.fake.APIKey() != "",
			"tickers":    s.fake.Tickers(),
		})
	}
	form := "keyless form: no API key"
	if s.fake.APIKey() != "" {
		form = "API-key form: pass the same -api-key to the other commands"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Simulator listening at %s (%s)\n", base, form)
	fmt.Fprintf(&b, "Coins: %s\n", strings.Join(s.fake.Tickers(), ", "))
	b.WriteString("Callbacks are signed with this public key:\n")
	b.WriteString(s.fake.PublicKeyPEM())
	fmt.Fprintf(&b, "Try, in another terminal:\n  export %s=%s\n", envBaseURL, base)
	b.WriteString("  cryptapi create -ticker btc -address DESTINATION -callback URL -pending\n")
	b.WriteString("  cryptapi sim pay -ticker btc -address-in ADDRESS_IN -amount 0.01\n")
	b.WriteString("  cryptapi sim confirm -txid TXID\n")
	_, err := io.WriteString(s.a.stdout, b.String())
	return err
}

// event prints one JSON line. s.mu must be held.
func (s *sim) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.a.stdout.Write(append(b, '\n'))
	return err
}

// printDelivery is the fake's delivery hook: it prints one line per
// delivery attempt, through the redacting writer.
func (s *sim) printDelivery(d cryptapitest.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	phase := "confirmed"
	if d.Pending {
		phase = "pending"
	}
	if d.Kind != "callback" {
		phase = "notification"
	}
	if s.json {
		_ = s.event(map[string]any{
			"event": "delivery", "kind": d.Kind, "pending": d.Pending, "method": d.Method,
			"url": d.URL, "status": d.StatusCode, "response": truncate(d.Response, 200),
			"ok": d.OK, "error": d.Err, "at": timeText(d.At),
		})
		return
	}
	outcome := fmt.Sprintf("HTTP %d %q", d.StatusCode, truncate(strings.TrimSpace(d.Response), 40))
	switch {
	case d.OK:
		outcome += ", acknowledged"
	case d.Err != "":
		outcome = "failed: " + d.Err
	default:
		outcome += ", not acknowledged"
	}
	fmt.Fprintf(s.a.stdout, "%s %s %s %s %s -> %s\n", timeText(d.At), d.Kind, phase, d.Method, cell(d.URL), cell(outcome))
}

// control serves the control endpoints.
func (s *sim) control(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		controlJSON(w, http.StatusMethodNotAllowed, map[string]string{"status": "error", "error": "use POST"})
		return
	}
	name := strings.TrimPrefix(r.URL.Path, simPrefix)
	switch name {
	case "pay", "confirm", "checkout-pay", "deposit-pay", "fund", "flush":
	default:
		controlJSON(w, http.StatusNotFound, map[string]string{"status": "error", "error": "unknown control endpoint"})
		return
	}
	if code, msg := refuseControl(r, s.remote); code != 0 {
		controlJSON(w, code, map[string]string{"status": "error", "error": msg})
		return
	}
	var in controlRequest
	if err := decodeControl(http.MaxBytesReader(w, r.Body, maxControlBody), &in); err != nil {
		controlJSON(w, http.StatusBadRequest, map[string]string{"status": "error", "error": err.Error()})
		return
	}
	var (
		res = map[string]string{"status": "success"}
		err error
	)
	switch name {
	case "pay":
		d, perr := parseAmount(in.Amount.String())
		if perr != nil {
			err = errors.New("amount: not a decimal number")
			break
		}
		var txid string
		txid, err = s.fake.Pay(in.Ticker, in.Address, d)
		if txid != "" {
			res["txid"] = txid
		}
	case "confirm":
		n, cerr := strconv.Atoi(in.Confirmations.String())
		if cerr != nil || n < 1 {
			err = errors.New("confirmations must be a number, at least 1")
			break
		}
		err = s.fake.Confirm(in.TxID, n)
	case "checkout-pay", "deposit-pay":
		var amount decimal.Decimal // zero: the order value of a checkout
		if in.Amount != "" {
			var perr error
			if amount, perr = parseAmount(in.Amount.String()); perr != nil {
				err = errors.New("amount: not a decimal number")
				break
			}
		}
		if name == "checkout-pay" {
			err = s.fake.PayCheckout(in.PaymentID, in.Ticker, amount)
		} else {
			err = s.fake.PayDeposit(in.PaymentID, in.Ticker, amount)
		}
	case "fund":
		d, perr := parseAmount(in.Amount.String())
		if perr != nil {
			err = errors.New("amount: not a decimal number")
			break
		}
		if err = s.fake.FundPayoutWallet(in.Ticker, d); err == nil {
			addr, bal, werr := s.fake.PayoutWallet(in.Ticker)
			err = werr
			res["address"], res["balance"] = addr, bal.String()
		}
	}
	if errors.Is(err, cryptapitest.ErrNoPayoutWallet) {
		err = errKeylessSim
	}
	if err == nil {
		// Deliveries caused by the call are made, and printed by the
		// delivery hook, before the answer, so that the caller sees their
		// effects.
		err = s.fake.Flush(r.Context())
	}
	if err != nil {
		res["status"] = "error"
		res["error"] = cleanMessage("", err.Error())
		controlJSON(w, http.StatusUnprocessableEntity, res)
		return
	}
	controlJSON(w, http.StatusOK, res)
}

// errKeylessSim is what the control endpoints answer for payout wallets
// on a keyless simulator.
var errKeylessSim = errors.New("this simulator serves the keyless form, which has no payout wallets: restart it with \"cryptapi sim serve -api-key KEY\"")

// controlRequest is the body of a control request. Amounts and counts may
// be JSON numbers or strings.
type controlRequest struct {
	Ticker        string      `json:"ticker"`
	Address       string      `json:"address"`
	Amount        json.Number `json:"amount"`
	TxID          string      `json:"txid"`
	Confirmations json.Number `json:"confirmations"`
	PaymentID     string      `json:"payment_id"`
}

// decodeControl reads one JSON object, with no unknown fields, into in;
// an empty body is an empty object.
func decodeControl(body io.Reader, in *controlRequest) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return errors.New("body too large")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(in); err != nil {
		// encoding/json's own texts name Go types: say it in the
		// endpoint's words.
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return fmt.Errorf("%s must be a string (an amount or a count may be a number)", te.Field)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return fmt.Errorf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		case strings.Contains(err.Error(), "invalid number literal"):
			return errors.New("amounts and counts must be decimal numbers")
		}
		return errors.New("the body must be a JSON object of the endpoint's fields")
	}
	if d.More() {
		return errors.New("the body must be one JSON object")
	}
	return nil
}

// refuseControl returns the status and message that refuse r, or 0. The
// control endpoints move money on the fake, which then sends correctly
// signed callbacks to the merchant, so they take only requests a page of
// another site cannot make: a JSON body (a cross-origin fetch of JSON
// needs a CORS preflight, which the simulator never grants, and a form
// cannot send it), no Origin or Sec-Fetch-Site that says another origin,
// and a Host that is localhost or a loopback address, or with remote any
// IP address (a page that rebinds its own DNS name to this address is
// same-origin to the browser, but sends its name as the Host; a page that
// calls 0.0.0.0, which some browsers send to this machine, sends that).
func refuseControl(r *http.Request, remote bool) (int, string) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1] // an IPv6 literal on the default port
	}
	if ip, err := netip.ParseAddr(host); !isLoopbackHost(host) && (!remote || err != nil || ip.IsUnspecified()) {
		if remote {
			return http.StatusForbidden, "control requests must name the simulator by IP address or localhost in the Host header"
		}
		return http.StatusForbidden, "control requests must name the simulator by a loopback address or localhost in the Host header"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return http.StatusForbidden, "cross-site control request refused"
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		self := asciiLower(r.Host)
		if len(origins) > 1 || (origins[0] != "http://"+self && origins[0] != "https://"+self) {
			return http.StatusForbidden, "cross-origin control request refused"
		}
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, "control requests must be JSON (Content-Type: application/json)"
	}
	return 0, ""
}

func controlJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ---- sim pay, confirm, checkout-pay, deposit-pay ----

// simFlags are the flags of the control commands. They take -base-url
// and $CRYPTAPI_BASE_URL like every other command, so that one export
// points the whole tool at the simulator.
type simFlags struct{ url string }

func addSimFlags(fs *flag.FlagSet) *simFlags {
	f := &simFlags{}
	fs.StringVar(&f.url, "base-url", "", "simulator `URL` (default $"+envBaseURL+", else "+defaultSimURL+")")
	alias(fs, "sim", "base-url")
	return f
}

// call posts form, as a JSON object, to a control endpoint and decodes
// the answer.
func (f *simFlags) call(ctx context.Context, a *app, endpoint string, form map[string]string) (map[string]string, error) {
	base := strings.TrimSpace(f.url)
	if base == "" {
		base = strings.TrimSpace(a.getenv(envBaseURL))
	}
	if base == "" {
		base = strings.TrimSpace(a.getenv(envSimURL))
	}
	if base == "" {
		base = defaultSimURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, usagef("-base-url must be the simulator's http URL, e.g. %s", defaultSimURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + simPrefix + endpoint
	u.RawQuery, u.Fragment = "", ""
	in, err := json.Marshal(form)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(in))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach the simulator at %s (is \"cryptapi sim serve\" running?)", u.Host)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxControlBody))
	if err != nil {
		return nil, err
	}
	var out map[string]string
	if json.Unmarshal(body, &out) != nil {
		return nil, fmt.Errorf("%s is not a simulator (HTTP %d)", u.Host, resp.StatusCode)
	}
	if out["status"] != "success" {
		msg := out["error"]
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d", resp.StatusCode)
		}
		if out["txid"] != "" {
			msg += " (txid " + out["txid"] + ")"
		}
		return nil, errors.New(msg)
	}
	return out, nil
}

func simPayCmd() *command {
	return &command{
		name:     "pay",
		synopsis: "-ticker TICKER -address-in ADDRESS_IN -amount AMOUNT [-base-url URL] [flags]",
		summary:  "make a customer payment to an address of the simulator",
		help: `Plays the customer: pays -amount of the coin to -address-in, an address
the simulator created (printed by create as "Address in"), and prints the transaction hash. The
payment is seen at once, unconfirmed; with pending callbacks enabled the
pending callback is delivered before this command returns. Confirm it
with "cryptapi sim confirm". A payment below the minimum is ignored, as
by the real service, and this command fails.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			sf := addSimFlags(fs)
			tk := fs.String("ticker", "", "coin or token, e.g. btc (required)")
			addr := fs.String("address-in", "", "the `address` to pay, as printed by create (required)")
			alias(fs, "address", "address-in")
			var amount decimalFlag
			fs.Var(&amount, "amount", "`amount` to pay, in the coin (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk, "address-in", *addr); err != nil {
					return err
				}
				amt, err := amount.positive("amount")
				if err != nil {
					return err
				}
				out, err := sf.call(ctx, a, "pay", map[string]string{
					"ticker": strings.TrimSpace(*tk), "address": strings.TrimSpace(*addr), "amount": amt.String(),
				})
				if err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						TxID string `json:"txid"`
					}{out["txid"]})
				}
				t := newTable()
				t.kv("Transaction", out["txid"])
				return t.flush(a.stdout)
			}
		},
	}
}

func simConfirmCmd() *command {
	return &command{
		name:     "confirm",
		synopsis: "-txid TXID [-confirmations N] [-base-url URL] [flags]",
		summary:  "confirm a simulated payment",
		help: `Plays the blockchain: gives transaction -txid (from "cryptapi sim pay")
N confirmations. When they reach what the address asked for, the payment
is forwarded and the confirmed callback is delivered before this command
returns.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			sf := addSimFlags(fs)
			txid := fs.String("txid", "", "transaction `hash` from sim pay (required)")
			n := fs.Int("confirmations", 1, "confirmations the transaction now has")
			return func(ctx context.Context, a *app) error {
				if err := required("txid", *txid); err != nil {
					return err
				}
				if *n < 1 {
					return usagef("-confirmations must be at least 1")
				}
				if _, err := sf.call(ctx, a, "confirm", map[string]string{
					"txid": strings.TrimSpace(*txid), "confirmations": strconv.Itoa(*n),
				}); err != nil {
					return err
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						TxID          string `json:"txid"`
						Confirmations int    `json:"confirmations"`
					}{*txid, *n})
				}
				t := newTable()
				t.kv("Transaction", *txid)
				t.kv("Confirmations", strconv.Itoa(*n))
				return t.flush(a.stdout)
			}
		},
	}
}

func simCheckoutPayCmd() *command {
	return &command{
		name:     "checkout-pay",
		synopsis: "-payment-id ID -ticker TICKER [-amount AMOUNT] [-base-url URL] [flags]",
		summary:  "pay a checkout page of the simulator",
		help: `Plays the customer on a hosted checkout page: pays checkout payment
-payment-id (from "cryptapi checkout" against the simulator) in coin
-ticker. Without -amount it pays exactly the order value at the coin's
price; less than that is refused, and a page is paid once. The payment
notification is delivered to the page's notify URL before this command
returns.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			sf := addSimFlags(fs)
			id := fs.String("payment-id", "", "`payment_id` of the checkout page (required)")
			tk := fs.String("ticker", "", "coin or token paid with, e.g. btc (required)")
			var amount decimalFlag
			fs.Var(&amount, "amount", "`amount` paid, in the coin (default: the order value)")
			return func(ctx context.Context, a *app) error {
				if err := required("payment-id", *id, "ticker", *tk); err != nil {
					return err
				}
				var amt decimal.Decimal
				if amount.set {
					var err error
					if amt, err = amount.positive("amount"); err != nil {
						return err
					}
				}
				return sf.payHosted(ctx, a, co, "checkout-pay", *id, *tk, amt)
			}
		},
	}
}

func simDepositPayCmd() *command {
	return &command{
		name:     "deposit-pay",
		synopsis: "-payment-id ID -ticker TICKER -amount AMOUNT [-base-url URL] [flags]",
		summary:  "make a deposit on a deposit page of the simulator",
		help: `Plays the customer on a hosted deposit page: deposits -amount of coin
-ticker to deposit page -payment-id (from "cryptapi deposit" against the
simulator). A page takes any number of deposits. The notification is
delivered to the page's notify URL before this command returns.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			sf := addSimFlags(fs)
			id := fs.String("payment-id", "", "`payment_id` of the deposit page (required)")
			tk := fs.String("ticker", "", "coin or token deposited, e.g. btc (required)")
			var amount decimalFlag
			fs.Var(&amount, "amount", "`amount` deposited, in the coin (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("payment-id", *id, "ticker", *tk); err != nil {
					return err
				}
				amt, err := amount.positive("amount")
				if err != nil {
					return err
				}
				return sf.payHosted(ctx, a, co, "deposit-pay", *id, *tk, amt)
			}
		},
	}
}

// payHosted calls the control endpoint of checkout-pay or deposit-pay
// and prints what was paid; a zero amount is the order value.
func (f *simFlags) payHosted(ctx context.Context, a *app, co *common, endpoint, id, tk string, amount decimal.Decimal) error {
	id, tk = strings.TrimSpace(id), strings.TrimSpace(tk)
	form := map[string]string{"payment_id": id, "ticker": tk}
	shown := "the order value"
	if !amount.IsZero() {
		form["amount"] = amount.String()
		shown = amount.String()
	}
	if _, err := f.call(ctx, a, endpoint, form); err != nil {
		return err
	}
	if co.json {
		return writeJSON(a.stdout, struct {
			PaymentID string `json:"payment_id"`
			Ticker    string `json:"ticker"`
			Amount    string `json:"amount,omitempty"`
		}{id, tk, form["amount"]})
	}
	t := newTable()
	t.kv("Payment ID", id)
	t.kv("Coin", tk)
	t.kv("Amount", shown)
	return t.flush(a.stdout)
}
