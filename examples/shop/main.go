// Command shop is a small web shop that takes crypto payments with the
// invoice package's payment page. It runs with one command, on the
// embedded fake service (no network, no keys):
//
//	go run ./examples/shop
//
// It prints the URL to open: a small store (products, a cart, a
// checkout), the customer's payment page (invoice.Desk.Page), an order
// page the customer can come back to, an admin for the shop's staff
// (invoices listed, filtered and found by order number; one invoice with
// its payments and history, settled by hand, reopened or cancelled), and,
// because the service is the fake, a developer panel at /dev/ that plays
// the customer and the chain: it pays in full, in part, late or in
// another coin, confirms, moves the clock and runs the Desk's Tick.
//
// It listens on loopback only. The admin and the panel answer only at
// that address (a DNS-rebinding page sends another Host) and only to
// their own forms, which carry a secret of the run; the admin also needs
// the sign-in link the shop prints when it starts.
//
// Its checkout offers every coin of the fake it has a demo wallet for
// (btc, eth, ltc, bch, trx, and USDT on trc20, erc20, bep20 and
// polygon), less those whose smallest payment is worth more than the
// cart: the customer chooses one on the payment page, and may switch
// before paying. -ticker pins one coin instead; one the fake does not
// have is refused at start.
//
// Against the real service, with your own wallet and a public URL the
// service can reach (for a test, a tunnel to -addr); the panel is gone:
//
//	go run ./examples/shop -live -address T...your...wallet \
//		-public-url https://shop.example
//
// -live refuses to start without -address and -public-url, and takes
// the coin of -ticker (USDT on TRC-20 if not given): one wallet, one
// coin.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
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
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

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

// liveTicker is the coin of -live without -ticker: -address is the
// wallet of one coin.
const liveTicker = "trc20_usdt"

// popularCoins are the coins the demo's checkout offers first, in this
// order; the fake's other coins follow in its order.
var popularCoins = []string{"btc", "eth", "trc20_usdt", "ltc"}

// demoWallets are the merchant's wallets on the fake, one per address
// family; a coin's payments are forwarded to the first one the fake takes
// for it.
var demoWallets = []string{
	"bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh",             // Bitcoin
	"ltc1qlaevvn2ddl8fn92xvwdgsdrzudt8cztufy8ky8",            // Litecoin
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

// demoCoins are the coins the demo offers on the fake, popularCoins
// first, and their wallets: every coin of the fake one of demoWallets is
// valid for.
func demoCoins(fake *cryptapitest.Server) ([]string, map[string]string) {
	all := fake.Tickers()
	rank := func(tk string) int {
		if i := slices.Index(popularCoins, tk); i >= 0 {
			return i
		}
		return len(popularCoins) + slices.Index(all, tk)
	}
	wallets := map[string]string{}
	var coins []string
	for _, tk := range all {
		if w, err := demoWallet(fake, tk); err == nil {
			coins, wallets[tk] = append(coins, tk), w
		}
	}
	slices.SortStableFunc(coins, func(a, b string) int { return rank(a) - rank(b) })
	return coins[:min(len(coins), invoice.MaxTickers)], wallets
}

func parseConfig(args []string, usage io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "loopback address to listen on (port 0: any free port)")
	fs.BoolVar(&c.live, "live", false, "use the real service instead of the embedded fake (needs -address and -public-url)")
	fs.StringVar(&c.destination, "address", "", "with -live: your wallet address that receives the forwarded funds")
	fs.StringVar(&c.publicURL, "public-url", "", "with -live: the public base URL the service calls back")
	fs.StringVar(&c.ticker, "ticker", "", "accept this coin or token only, e.g. btc, eth, ltc or trc20_usdt (default: the customer chooses; with -live: "+liveTicker+")")
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
		tk := cmp.Or(cfg.ticker, liveTicker)
		opts = options{client: client, verifier: verifier, publicURL: cfg.publicURL, localURL: base,
			coins: []string{tk}, wallets: map[string]string{tk: cfg.destination}}
	} else {
		clock := &shiftClock{}
		fake := newDemoFake(cryptapitest.WithClock(clock))
		defer fake.Close()
		opts, err = fakeOptions(fake, clock, base)
		if err != nil {
			return err
		}
		if cfg.ticker != "" {
			w, err := demoWallet(fake, cfg.ticker)
			if err != nil {
				return err
			}
			opts.coins, opts.wallets = []string{cfg.ticker}, map[string]string{cfg.ticker: w}
		}
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
	fmt.Fprintf(stdout, "shop: admin (sign-in link of this run) at %s%s\n", base, s.guard.loginPath())
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

// newDemoFake is the demo's fake service: the API-key form (with a key of
// this run), so that the admin's refunds are sent from its payout wallet.
func newDemoFake(opts ...cryptapitest.Option) *cryptapitest.Server {
	return cryptapitest.NewServer(append([]cryptapitest.Option{cryptapitest.WithAPIKey(rand.Text())}, opts...)...)
}

// demoPayoutFunds is what the demo puts in each payout wallet of the
// fake, in the coin: enough for the refunds of many orders.
var demoPayoutFunds = decimal.NewFromInt(100_000)

// fakeOptions wires a shop at base to the fake service fake, whose clock
// is clock, offering the customer the choice of demoCoins. On a fake of the API-key form (newDemoFake) the shop's client
// sends its key, and every coin's payout wallet is funded, so that
// SendRefund pays.
func fakeOptions(fake *cryptapitest.Server, clock devClock, base string) (options, error) {
	var key []cryptapi.Option
	if fake.APIKey() != "" {
		key = append(key, cryptapi.WithAPIKey(fake.APIKey()))
		for _, tk := range fake.Tickers() {
			if err := fake.FundPayoutWallet(tk, demoPayoutFunds); err != nil {
				return options{}, err
			}
		}
	}
	client, err := cryptapi.New(append(key, cryptapi.WithBaseURL(fake.URL()))...)
	if err != nil {
		return options{}, err
	}
	verifier, err := callback.NewVerifier(callback.WithPublicKey(fake.PublicKey()), callback.WithPublicURL(base))
	if err != nil {
		return options{}, err
	}
	coins, wallets := demoCoins(fake)
	return options{
		client: client, verifier: verifier, publicURL: base, localURL: base, coins: coins, wallets: wallets,
		fake: fake, clock: clock,
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
