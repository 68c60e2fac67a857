package callback

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"
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

// HandlerOption configures the handler made by NewHandler.
type HandlerOption func(*handler)

// WithStore sets the Store that de-duplicates callbacks. The default is a
// NewMemoryStore, which suits a single server; several servers behind one
// callback URL need a shared store.
func WithStore(s Store) HandlerOption {
	return func(h *handler) {
		if s == nil {
			panic("callback: WithStore(nil)")
		}
		h.store = s
	}
}

// WithLease sets how long a callback's claim lasts while fn runs (default
// DefaultLease). fn's context ends with the lease. It panics for d <= 0.
func WithLease(d time.Duration) HandlerOption {
	return func(h *handler) {
		if d <= 0 {
			panic("callback: WithLease needs a positive duration")
		}
		h.lease = d
	}
}

// WithAddressCheck makes the handler refuse callbacks for a payment
// address this merchant did not create: check reports whether addressIn is
// one of yours (and may check the payment's Custom parameters through its
// own records). A false answer is refused with 403 and never reaches fn; an
// error answers 500, so the service retries. Callbacks carry no timestamp,
// so this check and de-duplication are what stop replays.
func WithAddressCheck(check func(ctx context.Context, addressIn string) (bool, error)) HandlerOption {
	return func(h *handler) { h.addressCheck = check }
}

// WithMaxBodyBytes sets the largest POST body the handler reads (default
// DefaultMaxBodyBytes). A larger body is answered with 413. It panics for
// n <= 0.
func WithMaxBodyBytes(n int64) HandlerOption {
	return func(h *handler) {
		if n <= 0 {
			panic("callback: WithMaxBodyBytes needs a positive limit")
		}
		h.maxBody = n
	}
}

// WithErrorLog logs every callback that is not acknowledged (and store
// failures after a successful fn) to l, at warning level for rejections
// and error level for failures. Lines carry the status, the reason and,
// for verified callbacks, the payment key; never the signature or payload.
// The default is no logging.
func WithErrorLog(l *slog.Logger) HandlerOption {
	return func(h *handler) { h.log = l }
}

type handler struct {
	v            *Verifier
	fn           func(context.Context, *Payment) error
	store        Store
	lease        time.Duration
	addressCheck func(context.Context, string) (bool, error)
	maxBody      int64
	log          *slog.Logger
}

// NewHandler returns an http.Handler for the callback URL. For each
// request it verifies the signature (v), parses the payment, checks the
// address (WithAddressCheck), and runs the payment through Process with the
// store: fn is called once per payment key, and "*ok*" is answered only
// when fn succeeded now or before.
//
// Answers: 200 "*ok*" when processed, already done, or a pending callback
// after its confirmation; 400 for a malformed callback; 401 without a
// signature; 403 for a bad signature or an unknown address; 405 for other
// methods; 413 for an oversized body; 500 when fn or the store fails or
// the configuration is incomplete (GET without WithPublicURL); 503 while
// the payment is processed elsewhere or no key is available. The service
// retries everything but "*ok*".
//
// fn receives verified payments only; Pending tells the pending callback
// from the confirmed one. NewHandler panics for a nil v or fn.
func NewHandler(v *Verifier, fn func(context.Context, *Payment) error, opts ...HandlerOption) http.Handler {
	if v == nil || fn == nil {
		panic("callback: NewHandler needs a Verifier and a function")
	}
	h := &handler{v: v, fn: fn, lease: DefaultLease, maxBody: v.maxBody}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method == http.MethodPost && r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	}
	p, err := h.v.payment(r, h.maxBody)
	if err != nil {
		h.refuse(ctx, w, StatusCode(err), "callback refused", err, "")
		return
	}
	var key string // for the log only, so built only when there is one
	if h.log != nil {
		key = PaymentKey(p)
	}
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
	o, err := Process(ctx, h.store, h.lease, h.fn, p)
	switch {
	case o.Acknowledge():
		if err != nil && h.log != nil {
			h.log.LogAttrs(ctx, slog.LevelError, "callback handled but not recorded",
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

// refuse answers a status other than 200 with its generic text, never
// "*ok*", and logs why.
func (h *handler) refuse(ctx context.Context, w http.ResponseWriter, status int, msg string, err error, key string) {
	if status == http.StatusOK {
		status = http.StatusInternalServerError
	}
	if status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", "GET, POST")
	}
	if h.log != nil {
		level := slog.LevelWarn
		if status >= 500 {
			level = slog.LevelError
		}
		attrs := []slog.Attr{slog.Int("status", status)}
		if key != "" {
			attrs = append(attrs, slog.String("key", key))
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		h.log.LogAttrs(ctx, level, msg, attrs...)
	}
	http.Error(w, http.StatusText(status), status)
}
