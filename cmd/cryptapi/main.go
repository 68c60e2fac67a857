// Command cryptapi is a command-line client for the crypto payment
// forwarding service, for people who are not writing Go. It covers every
// operation of the cryptapi package, verifies saved callbacks, and runs the
// in-process fake of the service (cryptapitest) as a local simulator.
//
// Usage:
//
//	cryptapi <command> [flags]
//	cryptapi <command> -h
//
// Every parameter is a flag. Commands that call the service take
// -base-url (default: the keyless deployment, or the API-key deployment
// when a key is set), -api-key (better: the CRYPTAPI_API_KEY environment
// variable; the key is never printed), -json for JSON output instead of a
// table, -timeout and -retries. CRYPTAPI_BASE_URL sets the base URL too.
//
// Examples:
//
//	cryptapi info -ticker btc
//	cryptapi coins -json
//	cryptapi create -ticker trc20_usdt -address TXYZ... \
//	    -callback https://shop.example/cb -param order=1234 -pending
//	cryptapi logs -ticker trc20_usdt -callback 'https://shop.example/cb?order=1234'
//	cryptapi qrcode -ticker btc -address bc1q... -value 0.01 -out pay.png
//	cryptapi convert -ticker btc -value 25 -from USD
//	cryptapi estimate -ticker eth -addresses 2 -priority fast
//	cryptapi request -ticker btc -amount 25 -currency USD \
//	    -address bc1q... -callback https://shop.example/cb -qr-out pay.png
//	CRYPTAPI_API_KEY=... cryptapi checkout -value 25 \
//	    -redirect-url https://shop.example/thanks -notify-url https://shop.example/ipn
//	CRYPTAPI_API_KEY=... cryptapi payout -ticker btc -address bc1q... -value 0.5
//	cryptapi verify -url 'https://shop.example/cb?uuid=...' -signature 'base64...'
//	cryptapi verify -body-file body.txt -signature 'base64...' -fetch-key
//
// The simulator, in one terminal:
//
//	cryptapi sim serve -addr 127.0.0.1:8090
//
// and in another:
//
//	export CRYPTAPI_BASE_URL=http://127.0.0.1:8090
//	cryptapi create -ticker btc -address bc1q... -callback http://127.0.0.1:8000/cb
//	cryptapi sim pay -sim http://127.0.0.1:8090 -ticker btc -address <address_in> -amount 0.01
//	cryptapi sim confirm -sim http://127.0.0.1:8090 -txid <txid> -confirmations 1
//
// sim pay and sim confirm call the simulator's control endpoints (POST
// /_sim/pay and /_sim/confirm, form parameters, JSON answers), as sim
// checkout-pay and sim deposit-pay do for hosted pages; -sim defaults to
// CRYPTAPI_SIM_URL, else http://127.0.0.1:8090.
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
	"net/url"
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
	client   bool   // takes -base-url and -api-key
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
                 (default ` + fmt.Sprint(cryptapi.DefaultRetryMax) + `; calls that move money are never retried)

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
		fs.IntVar(&co.retries, "retries", cryptapi.DefaultRetryMax, "retries of a call that failed for a passing reason (calls that move money are never retried)")
	}
	if c.keyOnly {
		fs.Var(&secretFlag{val: &co.apiKey, r: a.secret}, "api-key", "API `key` the simulator requires (default: none, the keyless form); never printed")
	}
	exec := c.setup(fs, co)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			a.commandHelp(a.stdout, name, c, fs)
			return 0
		}
		return a.fail(name, usageError{err.Error()})
	}
	if fs.NArg() > 0 {
		return a.fail(name, usageError{fmt.Sprintf("unexpected argument %q: every parameter is a flag", truncate(fs.Arg(0), 40))})
	}
	if c.client && co.apiKey == "" {
		co.apiKey = strings.TrimSpace(a.getenv(envAPIKey))
	}
	if c.client && co.baseURL == "" {
		co.baseURL = strings.TrimSpace(a.getenv(envBaseURL))
	}
	if !c.noCommon {
		if co.timeout <= 0 {
			return a.fail(name, usagef("-timeout must be positive"))
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, co.timeout)
		defer cancel()
	}
	if err := exec(ctx, a); err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !c.noCommon {
			err = fmt.Errorf("timed out after %s (see -timeout)", co.timeout)
		}
		return a.fail(name, err)
	}
	return 0
}

// commandHelp prints the usage line, the description and the flags.
func (a *app) commandHelp(w io.Writer, name string, c *command, fs *flag.FlagSet) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: cryptapi %s %s\n\n%s\n", name, c.synopsis, strings.TrimSpace(c.help))
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		b.WriteString("\nFlags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	_, _ = io.WriteString(w, b.String())
}

// usageError is a wrong command line: exit status 2, nothing was sent.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError ends a command with a status and no further message; the
// command has printed what there was to say.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// preflight lists the SDK's errors for requests that were refused before
// anything was sent: like a wrong command line, they exit with status 2.
var preflight = []error{
	cryptapi.ErrEmptyAPIKey, cryptapi.ErrAPIKeyRequired, cryptapi.ErrInvalidTicker,
	cryptapi.ErrCallbackRequired, cryptapi.ErrInvalidCallback, cryptapi.ErrAddressRequired,
	cryptapi.ErrInvalidOutputs, cryptapi.ErrInvalidConfirmations, cryptapi.ErrInvalidQRSize,
	cryptapi.ErrExpireTooSoon, cryptapi.ErrRequestTooLong, cryptapi.ErrInvalidValue,
	cryptapi.ErrInvalidOption,
}

// fail prints err as one line and returns the exit status for it.
func (a *app) fail(name string, err error) int {
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	code := 1
	var ue usageError
	switch {
	case errors.As(err, &ue):
		code = 2
	case errors.Is(err, cryptapi.ErrAPIKeyRequired):
		code = 2
		err = errors.New("this operation needs an API key: set " + envAPIKey + " or pass -api-key")
	case isAny(err, preflight):
		code = 2
	case errors.Is(err, context.Canceled):
		err = errors.New("interrupted")
	}
	fmt.Fprintf(a.stderr, "cryptapi: %s: %s\n", name, cleanMessage(name, shortURLs(err)))
	if code == 2 && errors.As(err, &ue) {
		fmt.Fprintf(a.stderr, "Run 'cryptapi %s -h' for usage.\n", name)
	}
	return code
}

// shortURLs returns the text of err with the URL of a transport error
// (*url.Error) cut to scheme, host and path: the query is long, and the
// place an API key would travel.
func shortURLs(err error) string {
	msg := err.Error()
	var ue *url.Error
	if !errors.As(err, &ue) {
		return msg
	}
	short := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.Fragment, u.User = "", "", nil
		short = u.String()
	} else if i := strings.IndexByte(short, '?'); i >= 0 {
		short = short[:i]
	}
	return strings.Replace(msg, ue.Error(), fmt.Sprintf("%s %s: %v", ue.Op, short, ue.Err), 1)
}

func isAny(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// cleanMessage turns an SDK error text into one clean line: the package
// prefixes ("cryptapi: ", "cryptapitest: ") and a repeat of the command
// name go, line breaks and control characters become spaces.
func cleanMessage(name, msg string) string {
	for _, p := range []string{"cryptapitest: ", "cryptapi: ", "callback: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	last := name[strings.LastIndex(name, " ")+1:]
	msg = strings.TrimPrefix(msg, last+": ")
	msg = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	return strings.TrimSpace(msg)
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
		cryptapi.WithUserAgent("cryptapi-cli/" + cryptapi.Version),
		cryptapi.WithRetry(co.retries, cryptapi.DefaultRetryWaitMin, cryptapi.DefaultRetryWaitMax),
	}
	if co.baseURL != "" {
		opts = append(opts, cryptapi.WithBaseURL(co.baseURL))
	}
	if co.apiKey != "" {
		opts = append(opts, cryptapi.WithAPIKey(co.apiKey))
	}
	c, err := cryptapi.New(opts...)
	if err != nil {
		if errors.Is(err, cryptapi.ErrInvalidOption) {
			return nil, usagef("-base-url must be an absolute http(s) URL without a query")
		}
		return nil, err
	}
	return c, nil
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
