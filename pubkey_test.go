package cryptapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publishedKeySHA256 is the SHA-256 of the DER form of the key the keyless
// deployment publishes (see the service notes).
const publishedKeySHA256 = "694229344e0b037a25f6f16f032c8808609b18f92739d34c691269ec994e737c"

func publishedPEM(t *testing.T) string {
	var v struct {
		PubKey string `json:"pubkey"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "pubkey.json"), &v))
	return v.PubKey
}

func derSHA256(t *testing.T, pub *rsa.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

func TestPublicKey(t *testing.T) {
	eachForm(t, func(t *testing.T, f form) {
		c, api := f.setup(t)
		api.handle("GET /pubkey/", serveFixture(t, "pubkey.json"))
		pub, err := c.PublicKey(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "/pubkey/", api.last().Path)
		assert.Equal(t, 1024, pub.N.BitLen())
		assert.Equal(t, publishedKeySHA256, derSHA256(t, pub))
	})
}

func TestPublicKeyBadAnswers(t *testing.T) {
	c, api := setup(t)
	api.handle("GET /pubkey/", serveJSON(`{"status":"success","pubkey":"not a key"}`))
	pub, err := c.PublicKey(context.Background())
	assert.Nil(t, pub)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cryptapi: pubkey:")

	api.handle("GET /pubkey/", serveJSON(`{"status":"error","error":"unavailable"}`))
	_, err = c.PublicKey(context.Background())
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "unavailable", ae.Message)

	api.handle("GET /pubkey/", serveJSON(`{"status":"success","pubkey":{"n":"..."}}`))
	_, err = c.PublicKey(context.Background())
	var de *DecodeError
	assert.ErrorAs(t, err, &de)
}

func TestParsePublicKey(t *testing.T) {
	pemText := publishedPEM(t)
	pub, err := ParsePublicKey(pemText)
	require.NoError(t, err)
	assert.Equal(t, publishedKeySHA256, derSHA256(t, pub))

	// Copied out of JSON with literal \n sequences.
	escaped := strings.ReplaceAll(pemText, "\n", `\n`)
	pub2, err := ParsePublicKey(escaped)
	require.NoError(t, err)
	assert.True(t, pub.Equal(pub2))

	// PKCS #1 form.
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(pub)}))
	pub3, err := ParsePublicKey("\n  " + pkcs1)
	require.NoError(t, err)
	assert.True(t, pub.Equal(pub3))

	// Not RSA.
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	require.NoError(t, err)
	_, err = ParsePublicKey(string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	assert.ErrorContains(t, err, "not RSA")

	for name, bad := range map[string]string{
		"empty":         "",
		"not PEM":       "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC3",
		"wrong type":    string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		"garbage PKIX":  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte("junk")})),
		"garbage PKCS1": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: []byte("junk")})),
	} {
		_, err := ParsePublicKey(bad)
		assert.Error(t, err, name)
	}
}
