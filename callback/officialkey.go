package callback

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// officialKeyTimeout bounds one fetch of an official deployment's key.
const officialKeyTimeout = 15 * time.Second

// WithBlockBeeKey is the verifier option for merchants of the API-key
// deployment (cryptapi.BlockBeeURL). Its callbacks may be signed with that
// deployment's own key, which is published at its /pubkey/ and not with
// this package (PublishedKey is the keyless deployment's). The option
// fetches that key from https://api.blockbee.io/pubkey/ and nowhere else:
// over TLS with the certificate verified against the system's roots, no
// redirects followed, no base URL of your choosing. The key is cached and
// fetched again at most once per refetch interval (WithKeyRefetchInterval),
// when a callback does not verify with the keys at hand. The published key
// stays accepted as well.
//
// It never fails open: until a key is fetched, and whenever the fetch
// fails, callbacks that the keys at hand do not verify are refused (and so
// retried by the service), never acknowledged. It cannot be combined with
// WithKeySource or WithTrustFetchedKey.
func WithBlockBeeKey() VerifierOption {
	return withOfficialKey(cryptapi.BlockBeeURL, nil)
}

// withOfficialKey is WithBlockBeeKey for the deployment at base; tests
// give their own TLS server and a client that trusts its certificate.
func withOfficialKey(base string, hc *http.Client) VerifierOption {
	return verifierFunc(func(c *verifierConfig) error {
		src, err := officialKeyClient(base, hc)
		if err != nil {
			return err
		}
		c.official = src
		return nil
	})
}

// officialKeyClient builds the keyless client that fetches the key: https
// only, certificate verification on, redirects refused.
func officialKeyClient(base string, hc *http.Client) (*cryptapi.Client, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%w: the key must come from an https URL", cryptapi.ErrInvalidOption)
	}
	var rt http.RoundTripper
	if hc == nil {
		rt = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: 10 * time.Second,
			ForceAttemptHTTP2:   true,
		}
	} else {
		rt = hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
	}
	if t, ok := rt.(*http.Transport); ok && t.TLSClientConfig != nil && t.TLSClientConfig.InsecureSkipVerify {
		return nil, fmt.Errorf("%w: the key must come over verified TLS", cryptapi.ErrInvalidOption)
	}
	client := &http.Client{
		Transport: rt,
		Timeout:   officialKeyTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errOfficialRedirect
		},
	}
	return cryptapi.New(cryptapi.WithBaseURL(base), cryptapi.WithHTTPClient(client), cryptapi.WithRetry(1, 0, time.Second))
}

// errOfficialRedirect refuses a key served from anywhere but the official
// host.
var errOfficialRedirect = errors.New("callback: the key server redirected; only its own /pubkey/ is trusted")
