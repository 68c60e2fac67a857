package callback

import (
	"errors"
	"net/http"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// Errors returned while verifying and parsing callbacks. Match them with
// errors.Is; the returned error may wrap them with detail. No error of this
// package quotes a signature, a request target or a body.
var (
	// ErrMissingSignature is returned when a request has no x-ca-signature
	// header, or an empty one.
	ErrMissingSignature = errors.New("callback: missing x-ca-signature header")
	// ErrBadSignature is returned when the signature does not verify with
	// any accepted key. ErrMalformedSignature matches it too.
	ErrBadSignature = errors.New("callback: signature does not verify")
	// ErrMalformedSignature is returned for a signature that is not
	// standard base64, or whose length is not the key size. It matches
	// ErrBadSignature as well.
	ErrMalformedSignature = &wrapErr{msg: "callback: signature is not base64 of the key size", is: ErrBadSignature}
	// ErrNoPublicKey is returned when no verification key is available: a
	// nil key was given, or the key source could not be read or served a
	// key that the key policy refuses and no pinned key is at hand.
	// Callbacks are refused (never acknowledged) until a key is available.
	ErrNoPublicKey = errors.New("callback: no public key to verify with")
	// ErrKeyNotTrusted is returned (wrapped, beside ErrBadSignature or
	// ErrNoPublicKey) when the key served by the key source is neither
	// pinned nor trusted by WithTrustFetchedKey.
	ErrKeyNotTrusted = errors.New("callback: fetched public key is not pinned")
	// ErrPublicURLRequired is returned for a GET callback when the Verifier
	// has no public URL (WithPublicURL): the signed URL is never guessed
	// from Host or X-Forwarded-* headers. NewHandler returns it (with
	// cryptapi.ErrInvalidOption) for such a Verifier unless PostOnly is given.
	ErrPublicURLRequired = errors.New("callback: GET callbacks need WithPublicURL to rebuild the signed URL")
	// ErrBodyTooLarge is returned when a request body exceeds the body
	// limit. The handler answers 413.
	ErrBodyTooLarge = errors.New("callback: request body too large")
	// ErrBodyTimeout is returned when a POST body does not arrive within
	// the handler's read timeout (WithReadTimeout). The handler answers
	// 408 and closes the connection.
	ErrBodyTimeout = errors.New("callback: request body not received in time")
	// ErrMethod is returned for a request that is neither GET nor POST.
	ErrMethod = errors.New("callback: method must be GET or POST")
	// ErrMalformed is returned for a verified callback whose fields cannot
	// be parsed: a required field is missing or a field has the wrong form.
	// The wrapping error names the field, never its value.
	ErrMalformed = errors.New("callback: malformed callback")
	// ErrUnknownAddress is returned by the handler when the address check
	// (WithAddressCheck) does not know the callback's address_in.
	ErrUnknownAddress = errors.New("callback: unknown payment address")
	// ErrNoPaymentKey is returned by Process for a payment without uuid,
	// which cannot be de-duplicated: a payment is keyed by its uuid alone,
	// however it arrives.
	ErrNoPaymentKey = errors.New("callback: payment has no uuid")
	// ErrAddressCheckRequired is returned by NewHandler and Reconcile when
	// neither WithAddressCheck nor InsecureSkipAddressCheck is given. It
	// matches cryptapi.ErrInvalidOption too, which every unusable option
	// of this package returns (wrapped with the option's name).
	ErrAddressCheckRequired = &wrapErr{msg: "callback: an address check is required: give WithAddressCheck (or InsecureSkipAddressCheck)", is: cryptapi.ErrInvalidOption}
)

// wrapErr is a sentinel that also matches another sentinel.
type wrapErr struct {
	msg string
	is  error
}

func (e *wrapErr) Error() string { return e.msg }

func (e *wrapErr) Is(target error) bool { return target == e.is }

// fieldError reports a malformed field by name only.
type fieldError struct {
	field  string
	reason string
}

func (e *fieldError) Error() string {
	return "callback: malformed callback: field " + e.field + ": " + e.reason
}

func (e *fieldError) Is(target error) bool { return target == ErrMalformed }

func malformed(field, reason string) error { return &fieldError{field: field, reason: reason} }

// StatusCode returns the HTTP status the handler answers for err, an error
// returned by a Verifier method: 400 for ErrMalformed, 401 for
// ErrMissingSignature, 403 for ErrBadSignature and ErrUnknownAddress, 405
// for ErrMethod, 408 for ErrBodyTimeout, 413 for ErrBodyTooLarge, 503 for ErrNoPublicKey (the
// service retries later) and 500 for anything else; 200 only for nil. A
// merchant's own IPN handler can answer with it and be retried.
func StatusCode(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBodyTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, ErrMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, ErrMissingSignature):
		return http.StatusUnauthorized
	case errors.Is(err, ErrNoPublicKey):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrBadSignature), errors.Is(err, ErrUnknownAddress):
		return http.StatusForbidden
	case errors.Is(err, ErrMalformed):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
