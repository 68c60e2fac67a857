// Command cryptapi is a command-line client for the crypto payment
// forwarding service, for people who are not writing Go. It covers every
// operation of the cryptapi package, verifies saved callbacks, and runs the
// in-process fake of the service (cryptapitest) as a local simulator.
//
// Install it with
//
//	go install github.com/forwardpay/cryptapi-go/cmd/cryptapi@latest
//
// Usage:
//
//	cryptapi <command> [flags]
//	cryptapi <command> -h
//
// Every parameter is a flag, and one idea has one flag name in every
// command: -amount for an amount, -address for a destination address,
// -address-in for an address the service created for a payment. Commands
// that call the service take -base-url (default: the keyless deployment,
// or the API-key deployment when a key is set), -api-key (better: the
// CRYPTAPI_API_KEY environment variable; the key is never printed), -json
// for JSON output instead of a table, -timeout, -v to log each attempt on
// stderr, and -retries where a call is retried (checkout, deposit and
// payout never are). CRYPTAPI_BASE_URL sets the base URL of every command,
// the simulator's control commands included.
//
// Examples:
//
//	cryptapi info -ticker btc
//	cryptapi coins -json
//	cryptapi create -ticker trc20_usdt -address TXYZ... \
//	    -callback https://shop.example/cb -param order=1234 -pending
//	cryptapi logs -ticker trc20_usdt -callback 'https://shop.example/cb?order=1234'
//	cryptapi qrcode -ticker btc -address-in bc1q... -amount 0.01 -out pay.png
//	cryptapi convert -ticker btc -amount 25 -currency USD
//	cryptapi estimate -ticker eth -addresses 2 -priority fast
//	cryptapi request -ticker btc -amount 25 -currency USD \
//	    -address bc1q... -callback https://shop.example/cb -qr-out pay.png
//	CRYPTAPI_API_KEY=... cryptapi checkout -amount 25 \
//	    -redirect-url https://shop.example/thanks -notify-url https://shop.example/ipn
//	CRYPTAPI_API_KEY=... cryptapi payout -ticker btc -address bc1q... -amount 0.5
//	cryptapi verify -url 'https://shop.example/cb?uuid=...' -signature 'base64...'
//	cryptapi verify -body-file body.txt -signature 'base64...' -fetch-key
//	cryptapi version
//
// The simulator, in one terminal:
//
//	cryptapi sim serve -addr 127.0.0.1:8090
//
// and in another:
//
//	export CRYPTAPI_BASE_URL=http://127.0.0.1:8090
//	cryptapi create -ticker btc -address bc1q... -callback http://127.0.0.1:8000/cb -pending
//	cryptapi sim pay -ticker btc -address-in <address in> -amount 0.01
//	cryptapi sim confirm -txid <txid> -confirmations 1
//	cryptapi logs -ticker btc -callback http://127.0.0.1:8000/cb
//
// sim pay and sim confirm call the simulator's control endpoints (POST
// /_sim/pay and /_sim/confirm, a JSON object, JSON answers), as sim
// checkout-pay and sim deposit-pay do for hosted pages. Their -base-url
// defaults to CRYPTAPI_BASE_URL, else http://127.0.0.1:8090. The simulator
// listens on loopback only unless -allow-remote is given, and its control
// endpoints refuse requests a page of another site could send.
//
// Under -json, an error is printed on stdout as one JSON object:
//
//	{"error":{"command":"create","message":"...","exit_code":1,"http_status":503,"attempts":4}}
//
// (http_status and attempts only when known). The old flag names -value,
// -from, -sim and -address (for -address-in) and CRYPTAPI_SIM_URL are still
// accepted in this release.
//
// Exit status: 0 on success ("valid" for verify); 1 when the operation
// failed ("invalid" for verify); 2 when the command line was wrong, in which
// case nothing was sent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/forwardpay/cryptapi-go"
)

// Environment variables read by the tool.
const (
	envAPIKey  = "CRYPTAPI_API_KEY"
	envBaseURL = "CRYPTAPI_BASE_URL"
)

// defaultTimeout bounds a whole command, retries included.
const defaultTimeout = time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// app is one invocation of the tool: where output goes and how the
// environment is read. Both writers remove the API key from everything
// written through them.
type app struct {
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	secret *redactor
}

// command is a subcommand. setup registers the command's flags on fs and
// returns the function that runs it once the flags are parsed.
type command struct {
	name     string
	synopsis string // what follows the command name in the usage line
	summary  string // one line for the command list
	help     string // description shown by -h
	client   bool   // takes -base-url, -api-key and -v
	noRetry  bool   // its call is never retried, so it takes no -retries
	keyOnly  bool   // takes -api-key only, without the environment default
	noCommon bool   // takes neither -json nor -timeout
	setup    func(fs *flag.FlagSet, c *common) func(ctx context.Context, a *app) error
	subs     []*command // a command group such as sim
}

// commands lists the subcommands in the order the help shows them.
func commands() []*command {
	return []*command{
		infoCmd(), coinsCmd(), createCmd(), logsCmd(), qrcodeCmd(),
		convertCmd(), estimateCmd(), pubkeyCmd(), requestCmd(),
		checkoutCmd(), depositCmd(), payoutCmd(), reconcileCmd(), verifyCmd(), simCmd(),
		versionCmd(),
	}
}

// run runs the tool with args (without the program name), writing to
// stdout and stderr and reading the environment through env. It returns
// the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) string) int {
	if env == nil {
		env = func(string) string { return "" }
	}
	r := &redactor{}
	r.add(env(envAPIKey))
	a := &app{
		stdout: &redactingWriter{w: stdout, r: r},
		stderr: &redactingWriter{w: stderr, r: r},
		getenv: env,
		secret: r,
	}
	return a.runGroup(ctx, nil, "cryptapi calls the crypto payment forwarding service from the command line.", commands(), args)
}

// runGroup dispatches args to one of cmds; path is the command names so
// far ("sim" for the simulator's commands).
func (a *app) runGroup(ctx context.Context, path []string, intro string, cmds []*command, args []string) int {
	if len(args) == 0 {
		a.groupUsage(a.stderr, path, intro, cmds)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			// "help sim pay" is "sim pay -h".
			return a.runGroup(ctx, path, intro, cmds, append(append([]string{}, args[1:]...), "-h"))
		}
		a.groupUsage(a.stdout, path, intro, cmds)
		return 0
	}
	c := find(cmds, name)
	if c == nil {
		prog := strings.Join(append([]string{"cryptapi"}, path...), " ")
		fmt.Fprintf(a.stderr, "%s: unknown command %q\nRun '%s -h' for the list of commands.\n", prog, truncate(name, 40), prog)
		return 2
	}
	return a.runCommand(ctx, path, c, args[1:])
}

func find(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// groupUsage lists the commands of a group after its introduction.
func (a *app) groupUsage(w io.Writer, path []string, intro string, cmds []*command) {
	prog := strings.Join(append([]string{"cryptapi"}, path...), " ")
	var b strings.Builder
	b.WriteString(strings.TrimSpace(intro) + "\n\n")
	fmt.Fprintf(&b, "Usage:\n  %s <command> [flags]\n  %s <command> -h\n\nCommands:\n", prog, prog)
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.name, c.summary)
	}
	if len(path) == 0 {
		b.WriteString(`
Commands that call the service take these flags:
  -base-url URL  service base URL; default $` + envBaseURL + `, else
                 ` + cryptapi.CryptAPIURL + ` (keyless), or
                 ` + cryptapi.BlockBeeURL + ` with an API key
  -api-key KEY   API key; default $` + envAPIKey + `, which keeps it out of
                 the shell history. The key is never printed.
  -json          print JSON instead of a table
  -timeout D     give up after D (default ` + defaultTimeout.String() + `)
  -retries N     retries of a call that failed for a passing reason
                 (default ` + fmt.Sprint(cryptapi.DefaultRetryMax) + `; checkout, deposit and payout are
                 never retried)
  -v             log each attempt on stderr (the key shown as REDACTED)

"sim pay", "sim confirm", "sim checkout-pay" and "sim deposit-pay" take
-base-url and $` + envBaseURL + ` too (default there:
` + defaultSimURL + `), so one export points every command at
"cryptapi sim serve".

Under -json an error is printed on stdout as one JSON object:
  {"error":{"command":"...","message":"...","exit_code":N,
            "http_status":N,"attempts":N}}
(http_status and attempts only when known).

Exit status: 0 success ("valid" for verify), 1 failure ("invalid" for
verify), 2 wrong command line (nothing was sent).
`)
	}
	_, _ = io.WriteString(w, b.String())
}

// common holds the flags most commands share.
type common struct {
	baseURL string
	apiKey  string
	json    bool
	timeout time.Duration
	retries int
	verbose bool
	log     io.Writer // where -v writes; set by runCommand
}

// runCommand parses the flags of c and runs it.
func (a *app) runCommand(ctx context.Context, path []string, c *command, args []string) int {
	full := append(append([]string{}, path...), c.name)
	if c.subs != nil {
		return a.runGroup(ctx, full, c.help, c.subs, args)
	}
	name := strings.Join(full, " ")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	co := &common{}
	if !c.noCommon {
		fs.BoolVar(&co.json, "json", false, "print JSON instead of a table")
		fs.DurationVar(&co.timeout, "timeout", defaultTimeout, "give up after this `duration`")
	}
	if c.client {
		fs.StringVar(&co.baseURL, "base-url", "", "service base `URL` (default $"+envBaseURL+", else the public deployment)")
		fs.Var(&secretFlag{val: &co.apiKey, r: a.secret}, "api-key", "API `key` (default $"+envAPIKey+"); never printed")
		if c.noRetry {
			// Accepted for one release and without effect: nothing retries.
			fs.IntVar(&co.retries, "retries", 0, aliasMark+"no effect: this call is never retried")
		} else {
			fs.IntVar(&co.retries, "retries", cryptapi.DefaultRetryMax, "retries of a call that failed for a passing reason")
		}
		fs.BoolVar(&co.verbose, "v", false, "log each attempt (method, URL without the key, status) on stderr")
	}
	if c.keyOnly {
		fs.Var(&secretFlag{val: &co.apiKey, r: a.secret}, "api-key", "API `key` the simulator requires (default: none, the keyless form); never printed")
	}
	co.log = a.stderr
	exec := c.setup(fs, co)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.commandHelp(a.stdout, name, c, fs)
			return 0
		}
		// -json may follow the flag that failed to parse.
		return a.fail(name, usageError{err.Error()}, co.json || wantsJSON(args))
	}
	if fs.NArg() > 0 {
		return a.fail(name, usageError{fmt.Sprintf("unexpected argument %q: every parameter is a flag", truncate(fs.Arg(0), 40))}, co.json)
	}
	if c.client && co.apiKey == "" {
		co.apiKey = strings.TrimSpace(a.getenv(envAPIKey))
	}
	if c.client && co.baseURL == "" {
		co.baseURL = strings.TrimSpace(a.getenv(envBaseURL))
	}
	if !c.noCommon {
		if co.timeout <= 0 {
			return a.fail(name, usagef("-timeout must be positive"), co.json)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, co.timeout)
		defer cancel()
	}
	if err := exec(ctx, a); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !c.noCommon {
			err = fmt.Errorf("timed out after %s (see -timeout)", co.timeout)
		}
		return a.fail(name, err, co.json)
	}
	return 0
}

// commandHelp prints the usage line, the description and the flags.
func (a *app) commandHelp(w io.Writer, name string, c *command, fs *flag.FlagSet) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: cryptapi %s %s\n\n%s\n", name, c.synopsis, strings.TrimSpace(c.help))
	// Old spellings kept for a release are accepted but not listed.
	shown := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !isAlias(f) {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	hasFlags := false
	shown.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		b.WriteString("\nFlags:\n")
		shown.SetOutput(&b)
		shown.PrintDefaults()
	}
	_, _ = io.WriteString(w, b.String())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// client builds the SDK client from the common flags.
func (co *common) client() (*cryptapi.Client, error) {
	if co.retries < 0 {
		return nil, usagef("-retries must be 0 or more")
	}
	opts := []cryptapi.Option{
		cryptapi.WithUserAgent(userAgent),
		cryptapi.WithRetry(co.retries, cryptapi.DefaultRetryWaitMin, cryptapi.DefaultRetryWaitMax),
	}
	if co.baseURL != "" {
		opts = append(opts, cryptapi.WithBaseURL(co.baseURL))
	}
	if co.apiKey != "" {
		opts = append(opts, cryptapi.WithAPIKey(co.apiKey))
	}
	if co.verbose {
		// The client writes the URL with the key replaced by REDACTED;
		// co.log removes it from anything else too.
		opts = append(opts, cryptapi.WithLogger(slog.New(slog.NewTextHandler(co.log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	c, err := cryptapi.New(opts...)
	if errors.Is(err, cryptapi.ErrInvalidOption) {
		return nil, co.optionError()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// optionError names the flag that cryptapi.New refused. New does no I/O,
// so each flag is tried alone.
func (co *common) optionError() error {
	if co.baseURL != "" {
		if _, err := cryptapi.New(cryptapi.WithBaseURL(co.baseURL)); err != nil {
			return usagef("-base-url must be an absolute http(s) URL without credentials, a query or a fragment")
		}
	}
	if co.apiKey != "" {
		if _, err := cryptapi.New(cryptapi.WithAPIKey(co.apiKey)); err != nil {
			return usagef("-api-key must be printable text")
		}
		return usagef("-base-url must be https with an API key, which would travel unencrypted (http only to this machine)")
	}
	return usagef("-base-url, -api-key or -retries is not usable")
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
