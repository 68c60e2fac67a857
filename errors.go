package cryptapi

import (
	"errors"
	"fmt"
	"net/http"
)

// Errors returned before any request is sent. Match them with errors.Is;
// the returned error may wrap them with detail.
var (
	// ErrEmptyAPIKey is returned by New for WithAPIKey("").
	ErrEmptyAPIKey = errors.New("cryptapi: empty API key")
	// ErrAPIKeyRequired is returned by operations that need an API key in
	// both forms (checkout, deposit, payout) on a keyless client.
	ErrAPIKeyRequired = errors.New("cryptapi: this operation requires an API key (use WithAPIKey)")
	// ErrInvalidTicker is returned for a ticker that is not one.
	ErrInvalidTicker = errors.New("cryptapi: invalid ticker")
	// ErrCallbackRequired is returned when a callback URL is missing.
	ErrCallbackRequired = errors.New("cryptapi: callback URL is required")
	// ErrInvalidCallback is returned for a callback URL that is not an
	// absolute http or https URL of printable ASCII without a fragment, or
	// whose query the callback package could not parse (see CallbackURL).
	ErrInvalidCallback = errors.New("cryptapi: callback must be an absolute http(s) URL")
	// ErrAddressRequired is returned when a destination address is missing
	// (required by the keyless form) or a required address parameter is empty.
	ErrAddressRequired = errors.New("cryptapi: destination address is required")
	// ErrInvalidOutputs is returned for destinations that cannot be encoded:
	// an empty address, a non-positive share, shares that do not add up to
	// 1, more than MaxOutputs destinations, or Address and Outputs together.
	ErrInvalidOutputs = errors.New("cryptapi: invalid destination outputs")
	// ErrInvalidConfirmations is returned for a confirmations count below 1.
	ErrInvalidConfirmations = errors.New("cryptapi: confirmations must be at least 1")
	// ErrInvalidQRSize is returned for a QR size outside MinQRSize..MaxQRSize.
	ErrInvalidQRSize = errors.New("cryptapi: QR size must be between 64 and 1024 pixels")
	// ErrExpireTooSoon is returned for a checkout expiry less than an hour ahead.
	ErrExpireTooSoon = errors.New("cryptapi: checkout expiry must be at least one hour ahead")
	// ErrRequestTooLong is returned for a create request longer than
	// MaxCreateRequestLen characters.
	ErrRequestTooLong = errors.New("cryptapi: request exceeds 8192 characters")
	// ErrInvalidValue is returned for a missing, zero or negative amount.
	ErrInvalidValue = errors.New("cryptapi: value must be a positive amount")
	// ErrInvalidOption is returned for other unusable parameters; the
	// wrapping error names the parameter.
	ErrInvalidOption = errors.New("cryptapi: invalid option")
	// ErrResponseTooLarge is returned when an answer exceeds the response
	// size limit (see WithMaxResponseBytes).
	ErrResponseTooLarge = errors.New("cryptapi: response exceeds size limit")
)

// Errors returned after a request was sent.
var (
	// ErrNoLogs is matched (errors.Is) by the error of Logs when the
	// service answers that it found nothing for the callback URL: no
	// address was created with it, or none has been paid. It is the one
	// answer that means zero payments; the error also matches the
	// service's *APIError. Any other failure (a bad key, a rate limit, a
	// page that is not the service's JSON) does not match it.
	ErrNoLogs = errors.New("cryptapi: the service found no logs for this callback URL")
	// ErrOutcomeUnknown is matched (errors.Is) by the error of a call that
	// moves money or creates a payment page (CreatePayout, CreatePayouts,
	// CreateCheckout, CreateDeposit) when the request may have reached the
	// service but no complete answer of the service says what it did: the
	// connection failed after the request may have been written, the
	// context ended while the request was in flight, the answer was cut
	// off, too large, not the service's JSON (a gateway's page, a 5xx
	// without the service's error message) or a redirect. The call is
	// never sent again by the SDK or by net/http; check the dashboard (or
	// the payment's logs) before trying again, or the money may move
	// twice. The error also wraps the underlying failure (a *url.Error,
	// an *APIError, context.Canceled, ...).
	ErrOutcomeUnknown = errors.New("cryptapi: outcome unknown: the request may have reached the service")
	// ErrRedirect is matched by the error of a call whose answer was a
	// redirect the client does not follow: to another host, port or scheme
	// (the API key is in the query string and would go with it, in the
	// Referer header or in clear text), any redirect of a call that moves
	// money (following it would send the call a second time), or more than
	// MaxRedirects redirects. Reads follow redirects within the base URL's
	// scheme, host and port.
	ErrRedirect = errors.New("cryptapi: redirect not followed")
)

// MaxRedirects is how many redirects within the base URL's origin a read
// follows before it fails with ErrRedirect.
const MaxRedirects = 5

// outcomeError is the error of a money call whose outcome is unknown.
type outcomeError struct {
	op  string
	err error
}

func (e *outcomeError) Error() string {
	return "cryptapi: " + e.op + ": outcome unknown, the request may have reached the service " +
		"(check it before sending again): " + e.err.Error()
}

// Is matches ErrOutcomeUnknown.
func (e *outcomeError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns the failure.
func (e *outcomeError) Unwrap() error { return e.err }

// maxExcerpt bounds the body excerpt kept in errors.
const maxExcerpt = 512

// APIError is a failure reported by the service: a body with
// {"status":"error"} (whatever the HTTP status), a non-2xx answer, or an
// answer that is not JSON (an HTML page from a gateway, an empty body).
type APIError struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Message is the service's error message, or a short description when
	// the service gave none.
	Message string
	// Body is a bounded excerpt of the answer with any API key removed.
	Body []byte
}

// Error implements error. It does not include the body.
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("cryptapi: service error (HTTP %d): %s", e.StatusCode, msg)
}

// Temporary reports whether retrying later may succeed: 429 and 5xx.
func (e *APIError) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// DecodeError is returned when a successful answer is JSON of a shape the
// operation does not return.
type DecodeError struct {
	// Op is the operation, for example "info".
	Op string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Body is a bounded excerpt of the answer with any API key removed.
	Body []byte
	// Err is the underlying decoding error.
	Err error
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("cryptapi: %s: unexpected response shape (HTTP %d): %v", e.Op, e.StatusCode, e.Err)
}

// Unwrap returns the decoding error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is lets errors.Is(err, ErrResponseTooLarge) match the APIError readBody
// returns for an oversized answer.
func (e *APIError) Is(target error) bool {
	return target == ErrResponseTooLarge && e.Message == ErrResponseTooLarge.Error()
}
