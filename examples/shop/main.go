// Command shop is a small web shop that takes crypto payments with the
// invoice package's payment page. It runs with one command, on the
// embedded fake service (no network, no keys):
//
//	go run ./examples/shop
//
// It prints the URL to open: a product list, a checkout that creates an
// invoice, the customer's payment page (invoice.Desk.Page), and, because
// the service is the fake, a developer panel at /dev/ that simulates the
// customer's payment (full, partial, late, in the wrong coin), its
// confirmation, and the clock (re-quote, expiry). It listens on loopback
// only, and the panel answers only at that address (a DNS-rebinding page
// sends another Host) and only to its own form, which carries a secret of
// the run.
//
// It accepts USDT on TRC-20 unless -ticker names another coin of the
// fake (btc, eth, ltc, bch, trx, or USDT on erc20, bep20 or polygon);
// one the fake does not have is refused at start.
//
// Against the real service, with your own wallet and a public URL the
// service can reach (for a test, a tunnel to -addr); the panel is gone:
//
//	go run ./examples/shop -live -address T...your...wallet \
//		-public-url https://shop.example
//
// -live refuses to start without -address and -public-url.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
	"github.com/forwardpay/cryptapi-go/cryptapitest"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// config is what the program is told at start.
type config struct {
	addr        string
	live        bool
	publicURL   string
	destination string
	ticker      string
}

// Errors of the command line.
var (
	errLiveNeedsDestination = errors.New("-live needs -address, your own wallet that receives the payments")
	errLiveNeedsPublicURL   = errors.New("-live needs -public-url, an http(s) URL where the service reaches this shop")
	errNotLoopback          = errors.New("-addr must be a loopback address (127.0.0.1, ::1 or localhost): the demo's developer panel moves money on the fake service")
)

// defaultTicker is the coin the shop accepts unless -ticker says
// otherwise.
const defaultTicker = "trc20_usdt"

// demoWallets are the merchant's wallets on the fake, one per address
// family; a coin's payments are forwarded to the first one the fake takes
// for it.
var demoWallets = []string{
	"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh",             // Bitcoin
	"ltc1q5dj67tnj0hh0v7lv5lnhr0hxzjyvz8r949x5gd",            // Litecoin
	"bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", // Bitcoin Cash
	"0x71C7656EC7ab88b098defB751B7401B5f6d8976F",             // Ethereum and its token networks
	"TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj",                     // Tron and TRC-20
}

// demoWallet returns the wallet the demo forwards ticker's payments to,
// or an error that names the coins the fake has.
func demoWallet(fake *cryptapitest.Server, ticker string) (string, error) {
	for _, w := range demoWallets {
		if fake.ValidAddress(ticker, w) {
			return w, nil
		}
	}
	return "", fmt.Errorf("-ticker %q is not a coin of the demo's fake service; choose one of: %s", ticker, strings.Join(fake.Tickers(), ", "))
}

func parseConfig(args []string, usage io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "loopback address to listen on (port 0: any free port)")
	fs.BoolVar(&c.live, "live", false, "use the real service instead of the embedded fake (needs -address and -public-url)")
	fs.StringVar(&c.destination, "address", "", "with -live: your wallet address that receives the forwarded funds")
	fs.StringVar(&c.publicURL, "public-url", "", "with -live: the public base URL the service calls back")
	fs.StringVar(&c.ticker, "ticker", defaultTicker, "coin or token to accept, e.g. btc, eth, ltc or trc20_usdt")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return c, c.check()
}

func (c config) check() error {
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errNotLoopback
	}
	if !c.live {
		return nil
	}
	if c.destination == "" {
		return errLiveNeedsDestination
	}
	u, err := url.Parse(c.publicURL)
	if c.publicURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errLiveNeedsPublicURL
	}
	return nil
}

// loopbackOnly refuses a listener that is not on loopback: "localhost"
// is resolved by the system, and the panel must not be reachable from
// other machines.
func loopbackOnly(addr net.Addr) error {
	if tcp, ok := addr.(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		return errNotLoopback
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := loopbackOnly(ln.Addr()); err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()

	var opts options
	if cfg.live {
		client, err := cryptapi.New()
		if err != nil {
			return err
		}
		verifier, err := callback.NewVerifier(callback.WithPublicURL(cfg.publicURL))
		if err != nil {
			return err
		}
		opts = options{client: client, verifier: verifier, publicURL: cfg.publicURL, destination: cfg.destination, ticker: cfg.ticker}
	} else {
		clock := &shiftClock{}
		fake := cryptapitest.NewServer(cryptapitest.WithClock(clock))
		defer fake.Close()
		opts, err = fakeOptions(fake, clock, base)
		if err != nil {
			return err
		}
		if opts.destination, err = demoWallet(fake, cfg.ticker); err != nil {
			return err
		}
		opts.ticker = cfg.ticker
	}
	opts.log = slog.New(slog.NewTextHandler(stderr, nil))
	s, err := newShop(opts)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// Expiry and new quotes with nobody watching.
	go func() { _ = s.desk.Run(ctx, 5*time.Second) }()
	fmt.Fprintf(stdout, "shop: open %s/\n", base)
	if !cfg.live {
		fmt.Fprintf(stdout, "shop: developer panel (fake service) at %s/dev/\n", base)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// fakeOptions wires a shop at base to the fake service fake, whose clock
// is clock.
func fakeOptions(fake *cryptapitest.Server, clock devClock, base string) (options, error) {
	client, err := cryptapi.New(cryptapi.WithBaseURL(fake.URL()))
	if err != nil {
		return options{}, err
	}
	verifier, err := callback.NewVerifier(callback.WithPublicKey(fake.PublicKey()), callback.WithPublicURL(base))
	if err != nil {
		return options{}, err
	}
	destination, err := demoWallet(fake, defaultTicker)
	if err != nil {
		return options{}, err
	}
	return options{
		client: client, verifier: verifier, publicURL: base, destination: destination,
		ticker: defaultTicker, fake: fake, clock: clock,
		deskOptions: []invoice.Option{invoice.WithClock(clock)},
	}, nil
}

// devClock is the demo's clock: the desk's and the fake's, moved forward
// by the developer panel.
type devClock interface {
	Now() time.Time
	Advance(time.Duration)
}

// shiftClock is the system clock moved forward by Advance, so that
// countdowns run in real time and the panel can still jump ahead.
type shiftClock struct {
	mu    sync.Mutex
	shift time.Duration
}

// Now is the system time plus the shifts so far.
func (c *shiftClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.shift)
}

// Advance moves the clock forward by d.
func (c *shiftClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shift += d
}
