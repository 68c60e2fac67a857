package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/forwardpay/cryptapi-go"
)

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

// errorJSON is what -json prints on stdout for an error. Its shape is
// stable: scripts may rely on it.
type errorJSON struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Command    string `json:"command"`
	Message    string `json:"message"`
	ExitCode   int    `json:"exit_code"`
	HTTPStatus int    `json:"http_status,omitempty"`
	Attempts   int    `json:"attempts,omitempty"`
}

// fail prints err as one line, or as an errorJSON on stdout when asJSON,
// and returns the exit status for it.
func (a *app) fail(name string, err error, asJSON bool) int {
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
	msg := cleanMessage(name, shortURLs(err))
	body := errorBody{Command: name, Message: msg, ExitCode: code}
	var ae *cryptapi.AttemptsError
	if errors.As(err, &ae) {
		// The text says "(after N attempts)" when there was more than one.
		body.Attempts = ae.Attempts
	}
	var apiErr *cryptapi.APIError
	if errors.As(err, &apiErr) {
		body.HTTPStatus = apiErr.StatusCode
	}
	if asJSON {
		_ = writeJSON(a.stdout, errorJSON{body})
		return code
	}
	fmt.Fprintf(a.stderr, "cryptapi: %s: %s\n", name, msg)
	if code == 2 && errors.As(err, &ue) {
		fmt.Fprintf(a.stderr, "Run 'cryptapi %s -h' for usage.\n", name)
	}
	return code
}

// wantsJSON reports whether args ask for -json, for errors found before
// the flags are all parsed.
func wantsJSON(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			break
		}
		switch strings.TrimLeft(arg, "-") {
		case "json", "json=true", "json=1":
			if strings.HasPrefix(arg, "-") {
				return true
			}
		}
	}
	return false
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
