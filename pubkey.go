package cryptapi

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// PublicKey fetches the RSA public key the service signs callbacks with
// (the x-ca-signature header). The callback package pins the published key
// by default and uses this only as its policy allows.
func (c *Client) PublicKey(ctx context.Context) (*rsa.PublicKey, error) {
	out, err := call[pubKeyAnswer](ctx, c, &request{op: "pubkey", path: "pubkey/", retry: true})
	if err != nil {
		return nil, err
	}
	pub, err := ParsePublicKey(out.PubKey)
	if err != nil {
		return nil, fmt.Errorf("cryptapi: pubkey: %w", err)
	}
	return pub, nil
}

type pubKeyAnswer struct {
	PubKey string `json:"pubkey"`
	Status string `json:"status"`
}

func (p *pubKeyAnswer) apiStatus() string { return p.Status }

// ParsePublicKey parses a PEM RSA public key, in PKIX ("PUBLIC KEY") or
// PKCS #1 ("RSA PUBLIC KEY") form. Literal "\n" sequences, as found in
// keys copied out of JSON, are accepted.
func ParsePublicKey(pemText string) (*rsa.PublicKey, error) {
	pemText = strings.ReplaceAll(strings.TrimSpace(pemText), `\n`, "\n")
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("public key is not PEM")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		pub, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, errors.New("public key is not RSA")
		}
		return pub, nil
	case "RSA PUBLIC KEY":
		pub, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("public key: %w", err)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("unexpected PEM block %q", block.Type)
}
