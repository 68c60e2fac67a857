package main

import (
	"context"
	"crypto/rsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/forwardpay/cryptapi-go"
	"github.com/forwardpay/cryptapi-go/callback"
)

// maxVerifyFile bounds the files verify reads: a callback body is a few
// hundred bytes, a PEM key less than a kilobyte.
const maxVerifyFile = 1 << 20

func verifyCmd() *command {
	return &command{
		name:     "verify",
		synopsis: "(-url URL | -body-file FILE) -signature SIG [-pubkey-file FILE | -fetch-key] [flags]",
		summary:  "check the signature of a saved callback",
		help: `Checks a callback's x-ca-signature header against the service's key and
prints "valid" (exit status 0) or "invalid" (exit status 1).

For a GET callback the signature covers the full URL the service called,
scheme, host, path and query exactly as sent: give it with -url. For a
POST callback it covers the raw body: save the body to a file, byte for
byte, and give it with -body-file. Custom query parameters of a POST
callback are not covered.

"valid" means only that the service signed these bytes. A callback
handler (callback.NewHandler) also refuses a body that is not a
well-formed callback of its content type (a GET URL posted as a body, for
instance), and a callback for an address you did not create.

The key is the one published by the keyless deployment unless
-pubkey-file gives a PEM file (for example saved from cryptapi pubkey)
or -fetch-key fetches it from the service at -base-url.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			signedURL := fs.String("url", "", "full `URL` of a GET callback, as called")
			bodyFile := fs.String("body-file", "", "`file` holding the raw body of a POST callback")
			sig := fs.String("signature", "", "value of the x-ca-signature header, base64 (required)")
			keyFile := fs.String("pubkey-file", "", "PEM `file` with the public key to verify with")
			fetch := fs.Bool("fetch-key", false, "fetch the public key from the service instead of using the published one")
			return func(ctx context.Context, a *app) error {
				if (*signedURL == "") == (*bodyFile == "") {
					return usagef("give -url for a GET callback or -body-file for a POST callback (one of them)")
				}
				if err := required("signature", *sig); err != nil {
					return err
				}
				if *keyFile != "" && *fetch {
					return usagef("use -pubkey-file or -fetch-key, not both")
				}
				var signed []byte
				if *signedURL != "" {
					signed = []byte(strings.TrimSpace(*signedURL))
				} else {
					b, err := readFile(*bodyFile)
					if err != nil {
						return err
					}
					signed = b
				}
				pub, source, err := verifyKey(ctx, co, *keyFile, *fetch)
				if err != nil {
					return err
				}
				verr := callback.VerifySignature(pub, signed, strings.TrimSpace(*sig))
				fp := callback.Fingerprint(pub)
				if co.json {
					res := struct {
						Valid     bool   `json:"valid"`
						Reason    string `json:"reason,omitempty"`
						Key       string `json:"key"`
						KeyFinger string `json:"key_fingerprint"`
					}{Valid: verr == nil, Key: source, KeyFinger: fp}
					if verr != nil {
						res.Reason = cleanMessage("verify", verr.Error())
					}
					if err := writeJSON(a.stdout, res); err != nil {
						return err
					}
				} else {
					word := "valid"
					if verr != nil {
						word = "invalid"
					}
					if _, err := fmt.Fprintln(a.stdout, word); err != nil {
						return err
					}
				}
				if verr != nil {
					if !co.json {
						fmt.Fprintf(a.stderr, "cryptapi: verify: %s (key: %s, %s)\n", cleanMessage("verify", verr.Error()), source, fp)
					}
					return exitError{1}
				}
				return nil
			}
		},
	}
}

// verifyKey returns the key to verify with and a word for where it came
// from.
func verifyKey(ctx context.Context, co *common, file string, fetch bool) (*rsa.PublicKey, string, error) {
	switch {
	case file != "":
		b, err := readFile(file)
		if err != nil {
			return nil, "", err
		}
		pub, err := cryptapi.ParsePublicKey(string(b))
		if err != nil {
			return nil, "", fmt.Errorf("%s: not a PEM RSA public key", file)
		}
		return pub, "file", nil
	case fetch:
		c, err := co.client()
		if err != nil {
			return nil, "", err
		}
		pub, err := c.PublicKey(ctx)
		if err != nil {
			return nil, "", err
		}
		return pub, "fetched", nil
	}
	return callback.PublishedKey(), "published", nil
}

// readFile reads a small file whole.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxVerifyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxVerifyFile {
		return nil, errors.New(name + ": file too large")
	}
	return b, nil
}
