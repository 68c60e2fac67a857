// Command quickstart takes one payment from request to confirmed callback.
//
// By default it runs on the in-process fake service (cryptapitest): no
// network, no keys, a few seconds. It starts a merchant callback server on
// 127.0.0.1 with callback.NewHandler (which accepts callbacks only for
// the addresses it created), asks for a payment request of 25 USD in BTC
// (checked against the coin's minimum) with its QR code (written as a PNG
// file with -qr-out; nothing is written otherwise), plays the customer and
// the blockchain, and prints the verified
// pending and confirmed callbacks and the final logs.
//
//	go run ./examples/quickstart
//
// With -live it talks to the real service instead: the keyless deployment,
// or the API-key deployment when CRYPTAPI_API_KEY is set. The service must
// be able to reach this program, so -public-url names the address it is
// reachable at (a tunnel, for instance) and -listen where it listens; the
// payment is then made by a real customer, and the program waits -wait for
// callbacks. -live needs -address, the merchant's own wallet for -ticker:
// the service forwards the customer's payment there, so the program
// refuses to start without it.
//
//	CRYPTAPI_API_KEY=... go run ./examples/quickstart -live \
//	    -public-url https://shop.example -listen :8080 \
//	    -ticker btc -address <your own address> -amount 25 -currency USD
//
// The callback URL carries the order number and a random nonce
// (cryptapi.NewNonce): the service binds a callback URL to the first
// destination it is created with, and anyone can create one, so a URL
// that can be guessed could be taken first with another wallet.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
)

// demoAddress is the destination on the in-process fake: a well-formed
// address that no one holds the key of. It is never used with -live.
const demoAddress = "bc1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq9e75rs"

// publishedAddresses are example addresses printed in documentation (and
// this program's own demo address); -live refuses them.
var publishedAddresses = map[string]bool{
	demoAddress: true,
	"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh": true,
	"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq": true,
	"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2":         true,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

type config struct {
	live      bool
	publicURL string
	listen    string
	ticker    string
	address   string
	amount    string
	currency  string
	qrPath    string
	wait      time.Duration
}

func run(ctx context.Context, args []string, w io.Writer, getenv func(string) string) error {
	// The callback handler prints from its own goroutines.
	out := &syncWriter{w: w}
	var cfg config
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.BoolVar(&cfg.live, "live", false, "use the real service instead of the in-process fake (API key from CRYPTAPI_API_KEY, if set)")
	fs.StringVar(&cfg.publicURL, "public-url", "", "with -live: the public base URL the service calls back (e.g. https://shop.example)")
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:0", "address the merchant callback server listens on")
	fs.StringVar(&cfg.ticker, "ticker", "btc", "coin to be paid in")
	fs.StringVar(&cfg.address, "address", "", "the merchant's own destination address (required with -live; the fake uses a demo address)")
	fs.StringVar(&cfg.amount, "amount", "25", "amount to ask for")
	fs.StringVar(&cfg.currency, "currency", "USD", "currency of -amount; empty for the coin itself")
	fs.StringVar(&cfg.qrPath, "qr-out", "", "also write the payment's QR code to this PNG `file`")
	fs.DurationVar(&cfg.wait, "wait", 30*time.Minute, "with -live: how long to wait for the confirmed callback")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h printed the flags: a success
		}
		return err
	}
	amount, err := decimal.NewFromString(cfg.amount)
	if err != nil {
		return fmt.Errorf("-amount: %q is not a decimal amount", cfg.amount)
	}
	if cfg.live && cfg.publicURL == "" {
		return errors.New("-live needs -public-url: the service must be able to reach the callback server")
	}
	if cfg.live && cfg.address == "" {
		return errors.New("-live needs -address, your own wallet's address for -ticker: the service forwards the customer's payment there")
	}
	if cfg.live && publishedAddresses[cfg.address] {
		return fmt.Errorf("-address %s is a published example address, not yours: the service would forward the customer's payment to it", cfg.address)
	}
	if cfg.address == "" {
		cfg.address = demoAddress
	}

	// The service: the in-process fake, or the real one.
	var (
		fake       *cryptapitest.Server
		clientOpts []cryptapi.Option
		verifyOpts []callback.VerifierOption
	)
	if cfg.live {
		if key := getenv("CRYPTAPI_API_KEY"); key != "" {
			clientOpts = append(clientOpts, cryptapi.WithAPIKey(key))
		}
		// The published key is pinned by default; nothing to configure.
	} else {
		fake = cryptapitest.NewServer()
		defer fake.Close()
		clientOpts = append(clientOpts, cryptapi.WithBaseURL(fake.URL()))
		verifyOpts = append(verifyOpts, callback.WithPublicKey(fake.PublicKey()))
		der, _ := x509.MarshalPKIXPublicKey(fake.PublicKey())
		sum := sha256.Sum256(der)
		fmt.Fprintf(out, "service    %s (in-process fake, keyless form, signing key sha256 %x…)\n", fake.URL(), sum[:4])
	}
	client, err := cryptapi.New(clientOpts...)
	if err != nil {
		return err
	}

	// The merchant: a callback server with verified, de-duplicated payments.
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	public := cfg.publicURL
	if public == "" {
		public = "http://" + ln.Addr().String()
	}
	verifier, err := callback.NewVerifier(append(verifyOpts, callback.WithPublicURL(public))...)
	if err != nil {
		return err
	}
	shop := newShop(out, cryptapi.NewNonce())
	mux, err := shop.routes(verifier)
	if err != nil {
		return err
	}
	httpSrv := newHTTPServer(mux)
	go func() { _ = httpSrv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = httpSrv.Shutdown(sctx)
	}()
	fmt.Fprintf(out, "merchant   %s/callback\n", public)

	// A payment request: converted, checked against the minimum, with a QR code.
	pr, err := client.RequestPayment(ctx, cfg.ticker, &cryptapi.PaymentRequestOptions{
		CreateOptions: cryptapi.CreateOptions{
			Callback: public + "/callback",
			Params:   url.Values{"order_id": {"1001"}, "nonce": {shop.nonce}},
			Address:  cfg.address,
			Pending:  true,
		},
		Amount:   amount,
		Currency: cfg.currency,
		QRCode:   true,
		QRSize:   256,
	})
	if err != nil {
		return err
	}
	shop.created(pr.Address.AddressIn, "1001")
	fmt.Fprintf(out, "request    pay %s %s (%s %s) to %s\n", pr.AmountCoin, pr.Ticker, pr.Amount, pr.Currency, pr.Address.AddressIn)
	fmt.Fprintf(out, "           minimum %s %s; payment URI %s\n", pr.Minimum, pr.Ticker, pr.PaymentURI)
	png, err := pr.QRCode.PNG()
	if err != nil {
		return err
	}
	if cfg.qrPath == "" {
		fmt.Fprintf(out, "QR code    %d-byte PNG (-qr-out FILE writes it)\n", len(png))
	} else {
		if err := os.WriteFile(cfg.qrPath, png, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "QR code    %s (%d bytes)\n", cfg.qrPath, len(png))
	}

	if cfg.live {
		fmt.Fprintf(out, "waiting up to %s for the customer's payment...\n", cfg.wait)
		wctx, cancel := context.WithTimeout(ctx, cfg.wait)
		defer cancel()
		if err := shop.waitConfirmed(wctx); err != nil {
			return err
		}
	} else {
		// Play the customer and the blockchain. The fake delivers the
		// callback a payment or a confirmation causes in the background, so
		// each is made, and its line printed, under the shop's lock: the
		// callback's line waits for it, and the two never interleave.
		shop.mu.Lock()
		txid, err := fake.Pay(pr.Ticker, pr.Address.AddressIn, pr.AmountCoin)
		if err == nil {
			fmt.Fprintf(out, "customer   sent %s %s, txid %s\n", pr.AmountCoin, pr.Ticker, short(txid))
		}
		shop.mu.Unlock()
		if err != nil {
			return err
		}
		if err := fake.Flush(ctx); err != nil {
			return err
		}
		shop.mu.Lock()
		err = fake.Confirm(txid, 1)
		if err == nil {
			fmt.Fprintln(out, "chain      1 confirmation")
		}
		shop.mu.Unlock()
		if err != nil {
			return err
		}
		if err := fake.Flush(ctx); err != nil {
			return err
		}
		if err := shop.waitConfirmed(ctx); err != nil {
			return err
		}
	}

	logs, err := client.Logs(ctx, pr.Ticker, pr.Address.CallbackURL)
	if err != nil {
		return err
	}
	for _, p := range logs.Callbacks {
		fmt.Fprintf(out, "logs       uuid %s result %s confirmed %t, %d deliveries, forwarded %s after fee %s\n",
			short(p.UUID), p.Result, p.Confirmed(), len(p.Logs), p.ValueForwardedCoin, p.FeeCoin)
	}
	return nil
}

// newHTTPServer returns the callback server, with every time-out set: a
// client cannot hold a connection by sending its headers or body slowly,
// reading the answer slowly, or idling. The write time-out leaves room for
// the handler's lease.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      callback.DefaultLease + time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}

// shop records the addresses it created and its paid orders. The handler
// calls paid once per (uuid, pending) pair, after the signature and the
// address were checked. nonce is the order's secret in its callback URL.
type shop struct {
	out       io.Writer
	nonce     string
	mu        sync.Mutex
	orders    map[string]string // address_in -> order id
	confirmed chan struct{}
	once      sync.Once
}

func newShop(out io.Writer, nonce string) *shop {
	return &shop{out: out, nonce: nonce, orders: map[string]string{}, confirmed: make(chan struct{})}
}

// created records an address made for an order, before it is shown.
func (s *shop) created(addressIn, order string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orders[addressIn] = order
}

// routes serves the callback URL. Only callbacks for an address this shop
// created reach paid: anyone can create an address with this callback URL
// that forwards the money to them, and the service signs its callbacks
// too.
func (s *shop) routes(v *callback.Verifier) (*http.ServeMux, error) {
	h, err := callback.NewHandler(v, s.paid, callback.WithAddressCheck(s.knows))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/callback", h)
	return mux, nil
}

// knows is the handler's address check.
func (s *shop) knows(_ context.Context, addressIn string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.orders[addressIn]
	return ok, nil
}

func (s *shop) paid(_ context.Context, p *callback.Payment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	custom := p.Custom
	if custom.Get("nonce") != s.nonce {
		// Not this order's callback URL: nothing to credit.
		fmt.Fprintf(s.out, "callback   ignored: the nonce is not order %s's\n", custom.Get("order_id"))
		return nil
	}
	// The order comes from the shop's own record of the signed address.
	order := s.orders[p.AddressIn]
	if p.Pending {
		fmt.Fprintf(s.out, "callback   pending   order %s: %s %s seen, unconfirmed (signature verified)\n",
			order, p.ValueCoin, p.Coin)
		return nil
	}
	fmt.Fprintf(s.out, "callback   confirmed order %s: %s %s received, %s forwarded, fee %s, txid_out %s (signature verified)\n",
		order, p.ValueCoin, p.Coin, p.ValueForwardedCoin, p.FeeCoin, short(p.TxIDOut))
	s.once.Do(func() { close(s.confirmed) })
	return nil
}

func (s *shop) waitConfirmed(ctx context.Context) error {
	select {
	case <-s.confirmed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no confirmed callback: %w", ctx.Err())
	}
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func short(s string) string {
	if len(s) > 16 {
		return s[:8] + "…" + s[len(s)-6:]
	}
	return s
}
