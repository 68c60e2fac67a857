package callback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/internal/refuse"
)

// OK is the answer that tells the service a callback was received. Anything
// else (or any status but 200) makes it deliver the callback again.
const OK = "*ok*"

// WriteOK answers 200 with the body "*ok*". Call it only once the callback
// has been verified and its effects recorded (or found recorded).
func WriteOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, OK)
}

// HandlerOption configures the handler made by NewHandler (and Reconcile).
// An option given an unusable value makes NewHandler return an error
// matching cryptapi.ErrInvalidOption.
type HandlerOption interface {
	applyHandler(*handler) error
}

type handlerFunc func(*handler) error

func (f handlerFunc) applyHandler(h *handler) error { return f(h) }

// WithStore sets the Store that de-duplicates callbacks. The default is a
// NewMemoryStore, which suits a single server; several servers behind one
// callback URL need a shared store. A nil store is an invalid option.
func WithStore(s Store) HandlerOption {
	return handlerFunc(func(h *handler) error {
		if s == nil {
			return fmt.Errorf("%w: WithStore(nil)", cryptapi.ErrInvalidOption)
		}
		h.store = s
		return nil
	})
}

// WithLease sets how long a callback's claim lasts before another delivery
// may take it over (default DefaultLease). Process renews it while fn runs
// and cancels fn's context when it cannot; see Process. d <= 0 is an
// invalid option.
func WithLease(d time.Duration) HandlerOption {
	return handlerFunc(func(h *handler) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithLease needs a positive duration", cryptapi.ErrInvalidOption)
		}
		h.lease = d
		return nil
	})
}

// AddressCheck reports whether addressIn is a payment address this
// merchant created (and may check more through its own records). See
// WithAddressCheck.
type AddressCheck func(ctx context.Context, addressIn string) (bool, error)

// WithAddressCheck makes the handler refuse callbacks for a payment
// address this merchant did not create: check reports whether addressIn is
// one of yours. A false answer is refused with 403 and never reaches fn; an
// error answers 500, so the service retries.
//
// NewHandler and Reconcile require it (or InsecureSkipAddressCheck). Anyone
// can create an address with your callback URL and their own destination:
// the callbacks of such an address are signed by the service like yours,
// and for POST callbacks the query (your order id) is not even signed. A
// signed callback says a payment was forwarded somewhere, not to you; only
// an address you created and stored forwards to you. Callbacks carry no
// timestamp, so this check and de-duplication are also what stop replays.
// A nil check is an invalid option.
func WithAddressCheck(check AddressCheck) HandlerOption {
	return handlerFunc(func(h *handler) error {
		if check == nil {
			return fmt.Errorf("%w: WithAddressCheck(nil)", cryptapi.ErrInvalidOption)
		}
		h.addressCheck = check
		h.addressChoice = true
		return nil
	})
}

// InsecureSkipAddressCheck lets callbacks for any payment address reach
// fn, including addresses that someone else created with your callback URL
// and that forward the money to them. Use it only when fn itself looks up
// p.AddressIn in the records of the addresses you created and refuses the
// others, or in tests. Without it, NewHandler and Reconcile require
// WithAddressCheck.
func InsecureSkipAddressCheck() HandlerOption {
	return handlerFunc(func(h *handler) error {
		h.addressCheck = nil
		h.addressChoice = true
		return nil
	})
}

// DefaultReadTimeout is how long, by default, the handler waits for the
// body of a POST callback to arrive, counted from when the handler starts.
// A callback body is a few hundred bytes.
const DefaultReadTimeout = 10 * time.Second

// WithReadTimeout sets how long the handler waits for the body of a POST
// callback (default DefaultReadTimeout), or the ReadTimeout of the
// http.Server that received it when that is shorter; a body still
// arriving then is answered with 408 and the connection is closed. The handler sets a read
// deadline on the connection (http.ResponseController); where the
// ResponseWriter cannot set one, it stops waiting at the deadline and
// answers 408, and the read itself ends only when the server's own
// ReadTimeout ends it: set http.Server.ReadTimeout as well. d <= 0 is an
// invalid option.
func WithReadTimeout(d time.Duration) HandlerOption {
	return handlerFunc(func(h *handler) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithReadTimeout needs a positive duration", cryptapi.ErrInvalidOption)
		}
		h.readTimeout = d
		return nil
	})
}

// WithErrorLog sets where the handler logs every callback it does not
// acknowledge (and store failures after a successful fn): at warning
// level for rejections and error level for failures. Lines carry the
// status, the reason and, for verified callbacks, the payment key; never
// the signature or payload. The default is slog.Default(), so that a
// misconfigured shop that refuses every callback is not silent; to drop
// the lines, give a logger that discards them. A nil logger is an invalid
// option.
func WithErrorLog(l *slog.Logger) HandlerOption {
	return handlerFunc(func(h *handler) error {
		if l == nil {
			return fmt.Errorf("%w: WithErrorLog(nil)", cryptapi.ErrInvalidOption)
		}
		h.log = l
		return nil
	})
}

// PostOnly says that the callback URLs this handler serves were created
// for POST callbacks only (CreateOptions.Post): a GET request is refused
// with 405 before anything is read. Without it, NewHandler requires a
// Verifier that can verify GET callbacks (WithPublicURL), since a handler
// that expects them but cannot verify them would refuse every one.
func PostOnly() HandlerOption {
	return handlerFunc(func(h *handler) error {
		h.postOnly = true
		return nil
	})
}

type handler struct {
	v             *Verifier
	fn            func(context.Context, *Payment) error
	store         Store
	lease         time.Duration
	addressCheck  AddressCheck
	addressChoice bool // WithAddressCheck or InsecureSkipAddressCheck was given
	maxBody       int64
	readTimeout   time.Duration
	postOnly      bool         // PostOnly: GET callbacks are refused
	log           *slog.Logger // nil: slog.Default()
	pr            *processor   // Process's work on store and lease, made once
}

// apply applies opts and checks the choices every caller must make.
func (h *handler) apply(opts []HandlerOption) error {
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.applyHandler(h); err != nil {
			return err
		}
	}
	if !h.addressChoice {
		return ErrAddressCheckRequired
	}
	return nil
}

// NewHandler returns an http.Handler for the callback URL. For each
// request it verifies the signature (v), parses the payment, checks the
// address (WithAddressCheck), and runs the payment through Process with the
// store: fn is called once per payment key, and "*ok*" is answered only
// when fn succeeded now or before.
//
// An address check is required: NewHandler returns ErrAddressCheckRequired
// unless WithAddressCheck or InsecureSkipAddressCheck is given. A handler
// that could only refuse is an error too: without PostOnly, v must have a
// public URL (WithPublicURL) to verify GET callbacks, or NewHandler returns
// an error matching ErrPublicURLRequired. It returns an error matching
// cryptapi.ErrInvalidOption for a nil v or fn, a missing public URL or an unusable
// option.
//
// Answers: 200 "*ok*" when processed, already done, or a pending callback
// after its confirmation; 400 for a malformed callback; 401 without a
// signature; 403 for a bad signature or an unknown address; 405 for other
// methods (and GET with PostOnly); 408 for a body that did not arrive
// within the read timeout (WithReadTimeout); 413 for an oversized body;
// 500 when fn or the store fails; 503 while the payment is processed
// elsewhere or no key is available. The service retries everything but
// "*ok*". Every answer but "*ok*" is logged (WithErrorLog).
//
// fn receives verified payments only; Pending tells the pending callback
// from the confirmed one.
func NewHandler(v *Verifier, fn func(context.Context, *Payment) error, opts ...HandlerOption) (http.Handler, error) {
	if v == nil || fn == nil {
		return nil, fmt.Errorf("%w: NewHandler needs a Verifier and a function", cryptapi.ErrInvalidOption)
	}
	h := &handler{v: v, fn: fn, lease: DefaultLease, maxBody: v.maxBody, readTimeout: DefaultReadTimeout}
	if err := h.apply(opts); err != nil {
		return nil, err
	}
	if !h.postOnly && v.PublicURL() == "" {
		return nil, fmt.Errorf("%w: %w: give the Verifier WithPublicURL, or the handler PostOnly when the callback URLs were created for POST callbacks", cryptapi.ErrInvalidOption, ErrPublicURLRequired)
	}
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	h.pr = newProcessor(h.store, h.lease, realClock{})
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if h.postOnly && r.Method != http.MethodPost {
		h.refuse(ctx, w, http.StatusMethodNotAllowed, "callback refused", ErrMethod, "")
		return
	}
	if r.Method == http.MethodPost && r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	}
	p, err := h.v.payment(r, bodyReader{w: w, limit: h.maxBody, timeout: h.readTimeout})
	if err != nil {
		if errors.Is(err, ErrBodyTimeout) {
			w.Header().Set("Connection", "close")
		}
		h.refuse(ctx, w, StatusCode(err), "callback refused", err, "")
		return
	}
	key := PaymentKey(p) // for the log
	if h.addressCheck != nil {
		ok, err := h.addressCheck(ctx, p.AddressIn)
		if err != nil {
			h.refuse(ctx, w, http.StatusInternalServerError, "callback address check failed", err, key)
			return
		}
		if !ok {
			h.refuse(ctx, w, http.StatusForbidden, "callback refused", ErrUnknownAddress, key)
			return
		}
	}
	o, err := h.pr.process(ctx, h.fn, p) // Process, with the processor made once
	switch {
	case o.Acknowledge():
		if err != nil {
			h.logger().LogAttrs(ctx, slog.LevelError, "callback handled but not recorded",
				slog.String("key", key), slog.String("outcome", o.String()), slog.String("error", err.Error()))
		}
		WriteOK(w)
	case o == Busy:
		h.refuse(ctx, w, http.StatusServiceUnavailable, "callback busy", errors.Join(errBusy, err), key)
	default:
		h.refuse(ctx, w, http.StatusInternalServerError, "callback failed", err, key)
	}
}

var errBusy = errors.New("callback: payment is being processed elsewhere")

// refuse answers a status other than 200, never "*ok*", and logs why.
func (h *handler) refuse(ctx context.Context, w http.ResponseWriter, status int, msg string, err error, key string) {
	allow := "GET, POST"
	if h.postOnly {
		allow = "POST"
	}
	var attrs []slog.Attr
	if key != "" {
		attrs = append(attrs, slog.String("key", key))
	}
	refuse.Write(ctx, w, h.logger(), status, allow, msg, err, attrs...)
}

// logger is the handler's log: WithErrorLog's, or slog.Default() as it is
// when a line is written.
func (h *handler) logger() *slog.Logger {
	if h.log != nil {
		return h.log
	}
	return slog.Default()
}
