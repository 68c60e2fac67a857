package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// The simulator runs cryptapitest's fake of the service behind an HTTP
// server of its own, on a fixed address: the fake's operations are passed
// through to it, and the control endpoints under simPrefix play the
// customer and the blockchain.
const (
	simPrefix     = "/_sim/"
	envSimURL     = "CRYPTAPI_SIM_URL"
	defaultSimURL = "http://127.0.0.1:8090"
	// simPoll is how often the simulator looks for deliveries made on its
	// own (retries); deliveries caused by a control call are printed
	// before the call is answered.
	simPoll = 250 * time.Millisecond
	// maxControlBody bounds control requests and answers.
	maxControlBody = 64 << 10
)

func simCmd() *command {
	return &command{
		name:    "sim",
		summary: "run a local simulator of the service (serve, pay, confirm)",
		help: `The simulator is an in-process fake of the service, served on a fixed
address ("sim serve"), with control commands that play the customer
("sim pay") and the blockchain ("sim confirm") from another terminal.`,
		subs: []*command{simServeCmd(), simPayCmd(), simConfirmCmd()},
	}
}

func simServeCmd() *command {
	return &command{
		name:     "serve",
		synopsis: "[-addr HOST:PORT] [-api-key KEY] [flags]",
		summary:  "serve the fake service and print each callback delivery",
		help: `Serves an in-process fake of the service on -addr until interrupted. It
prints its base URL, the public key its callbacks are signed with, and
then one line per callback or notification delivery.

Point the other commands at it with -base-url (or CRYPTAPI_BASE_URL) and
play the customer and the blockchain with "cryptapi sim pay" and
"cryptapi sim confirm". Without -api-key the fake is the keyless form;
with it, the API-key form (checkout, deposit and payout need it).

Control endpoints, for scripts (POST, form parameters, JSON answers):
  /_sim/pay      ticker, address, amount    -> {"status":"success","txid":...}
  /_sim/confirm  txid, confirmations        -> {"status":"success"}
  /_sim/flush                               wait for due deliveries`,
		noCommon: true,
		keyOnly:  true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			addr := fs.String("addr", "127.0.0.1:8090", "`address` to listen on")
			asJSON := fs.Bool("json", false, "print JSON lines instead of text")
			seed := fs.Uint64("seed", 1, "`seed` of the generated addresses and transaction hashes")
			retries := fs.String("retry-schedule", "", "comma-separated `waits` before each retry of an unacknowledged delivery, e.g. 10s,1m,5m; \"none\" for one attempt (default: the service's schedule, 1m up to 24h)")
			timeout := fs.Duration("delivery-timeout", cryptapitest.DefaultDeliveryTimeout, "bound on each delivery attempt, a `duration`")
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
				return serveSim(ctx, a, *addr, *asJSON, opts)
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

// sim is a running simulator.
type sim struct {
	a      *app
	fake   *cryptapitest.Server
	json   bool
	mu     sync.Mutex
	shown  int // deliveries printed so far
	closed bool
}

// serveSim runs the simulator until ctx ends.
func serveSim(ctx context.Context, a *app, addr string, asJSON bool, opts []cryptapitest.Option) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	fake, err := newFake(opts)
	if err != nil {
		return err
	}
	defer fake.Close()
	target, err := url.Parse(fake.URL())
	if err != nil {
		return err
	}
	s := &sim{a: a, fake: fake, json: asJSON}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			controlJSON(w, http.StatusBadGateway, map[string]string{"status": "error", "error": "simulator unavailable"})
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc(simPrefix, s.control)
	mux.Handle("/", proxy)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := s.banner("http://" + ln.Addr().String()); err != nil {
		return err
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	ticker := time.NewTicker(simPoll)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			s.printDeliveries()
		case err := <-serveErr:
			return err
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = srv.Shutdown(sctx)
			cancel()
			s.printDeliveries()
			s.mu.Lock()
			s.closed = true
			s.mu.Unlock()
			if !s.json {
				fmt.Fprintln(a.stderr, "cryptapi: sim serve: stopped")
			}
			return nil
		}
	}
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
	fmt.Fprintf(&b, "Try:\n  export %s=%s\n  cryptapi sim pay -sim %s -ticker btc -address ADDRESS_IN -amount 0.01\n", envBaseURL, base, base)
	_, err := io.WriteString(s.a.stdout, b.String())
	return err
}

// event prints one JSON line.
func (s *sim) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.a.stdout.Write(append(b, '\n'))
	return err
}

// printDeliveries prints the deliveries not printed yet, one line each.
func (s *sim) printDeliveries() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	all := s.fake.Deliveries()
	for _, d := range all[min(s.shown, len(all)):] {
		s.printDelivery(d)
	}
	s.shown = len(all)
}

func (s *sim) printDelivery(d cryptapitest.Delivery) {
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
	r.Body = http.MaxBytesReader(w, r.Body, maxControlBody)
	if err := r.ParseForm(); err != nil {
		controlJSON(w, http.StatusBadRequest, map[string]string{"status": "error", "error": "malformed form"})
		return
	}
	var (
		res = map[string]string{"status": "success"}
		err error
	)
	switch strings.TrimPrefix(r.URL.Path, simPrefix) {
	case "pay":
		var amount = r.PostForm.Get("amount")
		d, perr := parseAmount(amount)
		if perr != nil {
			err = errors.New("amount: not a decimal number")
			break
		}
		var txid string
		txid, err = s.fake.Pay(r.PostForm.Get("ticker"), r.PostForm.Get("address"), d)
		if txid != "" {
			res["txid"] = txid
		}
	case "confirm":
		n, cerr := strconv.Atoi(r.PostForm.Get("confirmations"))
		if cerr != nil || n < 1 {
			err = errors.New("confirmations must be a number, at least 1")
			break
		}
		err = s.fake.Confirm(r.PostForm.Get("txid"), n)
	case "flush":
	default:
		controlJSON(w, http.StatusNotFound, map[string]string{"status": "error", "error": "unknown control endpoint"})
		return
	}
	if err == nil {
		// Deliveries caused by the call are made and printed before the
		// answer, so that the caller sees their effects.
		err = s.fake.Flush(r.Context())
		s.printDeliveries()
	}
	if err != nil {
		res["status"] = "error"
		res["error"] = cleanMessage("", err.Error())
		controlJSON(w, http.StatusUnprocessableEntity, res)
		return
	}
	controlJSON(w, http.StatusOK, res)
}

func controlJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ---- sim pay / sim confirm ----

// simFlags are the flags of the control commands.
type simFlags struct{ url string }

func addSimFlags(fs *flag.FlagSet) *simFlags {
	f := &simFlags{}
	fs.StringVar(&f.url, "sim", "", "simulator `URL` (default $"+envSimURL+", else "+defaultSimURL+")")
	return f
}

// call posts form to a control endpoint and decodes the answer.
func (f *simFlags) call(ctx context.Context, a *app, endpoint string, form url.Values) (map[string]string, error) {
	base := strings.TrimSpace(f.url)
	if base == "" {
		base = strings.TrimSpace(a.getenv(envSimURL))
	}
	if base == "" {
		base = defaultSimURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, usagef("-sim must be the simulator's http URL, e.g. %s", defaultSimURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + simPrefix + endpoint
	u.RawQuery, u.Fragment = "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
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
		synopsis: "-ticker TICKER -address ADDRESS_IN -amount AMOUNT [-sim URL] [flags]",
		summary:  "make a customer payment to an address of the simulator",
		help: `Plays the customer: pays -amount of the coin to -address, an address the
simulator created (address_in), and prints the transaction hash. The
payment is seen at once, unconfirmed; with pending callbacks enabled the
pending callback is delivered before this command returns. Confirm it
with "cryptapi sim confirm". A payment below the minimum is ignored, as
by the real service, and this command fails.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			sf := addSimFlags(fs)
			tk := fs.String("ticker", "", "coin or token, e.g. btc (required)")
			addr := fs.String("address", "", "the `address_in` to pay (required)")
			var amount decimalFlag
			fs.Var(&amount, "amount", "`amount` to pay, in the coin (required)")
			return func(ctx context.Context, a *app) error {
				if err := required("ticker", *tk, "address", *addr); err != nil {
					return err
				}
				amt, err := amount.positive("amount")
				if err != nil {
					return err
				}
				out, err := sf.call(ctx, a, "pay", url.Values{
					"ticker": {strings.TrimSpace(*tk)}, "address": {strings.TrimSpace(*addr)}, "amount": {amt.String()},
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
		synopsis: "-txid TXID [-confirmations N] [-sim URL] [flags]",
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
				if _, err := sf.call(ctx, a, "confirm", url.Values{
					"txid": {strings.TrimSpace(*txid)}, "confirmations": {strconv.Itoa(*n)},
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
