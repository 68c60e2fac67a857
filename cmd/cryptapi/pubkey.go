package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"

	"github.com/forwardpay/cryptapi-go/callback"
)

func pubkeyCmd() *command {
	return &command{
		name:     "pubkey",
		synopsis: "[flags]",
		summary:  "fetch the public key that verifies callback signatures",
		help: `Fetches the RSA public key the service signs callbacks with and prints
it as PEM, followed by its SHA-256 fingerprint and whether it is the key
published by the keyless deployment (the one verify uses by default).
The output can be saved and given to verify -pubkey-file.`,
		client: true,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			return func(ctx context.Context, a *app) error {
				c, err := co.client()
				if err != nil {
					return err
				}
				pub, err := c.PublicKey(ctx)
				if err != nil {
					return err
				}
				der, err := x509.MarshalPKIXPublicKey(pub)
				if err != nil {
					return fmt.Errorf("encoding the key: %w", err)
				}
				pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
				fp := callback.Fingerprint(pub)
				published := fp == callback.PublishedKeyFingerprint
				if co.json {
					return writeJSON(a.stdout, struct {
						PEM         string `json:"pem"`
						Fingerprint string `json:"fingerprint"`
						Bits        int    `json:"bits"`
						Published   bool   `json:"published"`
					}{pemText, fp, pub.N.BitLen(), published})
				}
				t := newTable()
				t.kv("Fingerprint (SHA-256)", fp)
				t.kv("Bits", fmt.Sprint(pub.N.BitLen()))
				t.kv("Published key", yesNo(published))
				if _, err := fmt.Fprint(a.stdout, pemText); err != nil {
					return err
				}
				return t.flush(a.stdout)
			}
		},
	}
}
