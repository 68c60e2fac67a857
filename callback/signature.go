package callback

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"

	cryptapi "github.com/forwardpay/cryptapi-go"
)

// SignatureHeader is the header that carries a callback's signature: base64
// of an RSA PKCS#1 v1.5 signature over the SHA-256 of the signed bytes.
const SignatureHeader = "X-Ca-Signature"

// PublishedKeyPEM is the public key published by the keyless deployment of
// the service (what its /pubkey/ served in October 2026). A Verifier pins
// it by default.
const PublishedKeyPEM = `-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC3FT0Ym8b3myVxhQW7ESuuu6lo
dGAsUJs4fq+Ey//jm27jQ7HHHDmP1YJO7XE7Jf/0DTEJgcw4EZhJFVwsk6d3+4fy
Bsn0tKeyGMiaE6cVkX0cy6Y85o8zgc/CwZKc0uw6d5siAo++xl2zl+RGMXCELQVE
ox7pp208zTvown577wIDAQAB
-----END PUBLIC KEY-----
`

// PublishedKeyFingerprint is the hex SHA-256 of the DER
// (SubjectPublicKeyInfo) form of PublishedKeyPEM, as Fingerprint computes it.
const PublishedKeyFingerprint = "694229344e0b037a25f6f16f032c8808609b18f92739d34c691269ec994e737c"

// PublishedKey returns PublishedKeyPEM parsed. Each call returns a new
// value, so callers may not change the pinned default by mutating it.
func PublishedKey() *rsa.PublicKey {
	pub, err := cryptapi.ParsePublicKey(PublishedKeyPEM)
	if err != nil {
		panic("callback: the published key does not parse: " + err.Error())
	}
	return pub
}

// Fingerprint returns the hex SHA-256 of pub's DER (SubjectPublicKeyInfo)
// form, the value pins are compared by. It returns "" for a nil or
// unusable key.
func Fingerprint(pub *rsa.PublicKey) string {
	fp, ok := fingerprint(pub)
	if !ok {
		return ""
	}
	return hex.EncodeToString(fp[:])
}

func fingerprint(pub *rsa.PublicKey) ([32]byte, bool) {
	if pub == nil || pub.N == nil {
		return [32]byte{}, false
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return [32]byte{}, false
	}
	return sha256.Sum256(der), true
}

// VerifySignature checks that signatureB64 (the x-ca-signature header) is a
// valid signature of signed by pub: standard base64 of an RSA PKCS#1 v1.5
// signature over SHA-256(signed). signed is the full callback URL for GET
// callbacks and the raw body for POST callbacks.
//
// It returns ErrNoPublicKey for a nil key, ErrMissingSignature for an empty
// signature, ErrMalformedSignature for one that is not base64 or not of the
// key's size, and ErrBadSignature when it does not verify. The errors never
// quote the signature or the signed bytes.
func VerifySignature(pub *rsa.PublicKey, signed []byte, signatureB64 string) error {
	if pub == nil || pub.N == nil {
		return ErrNoPublicKey
	}
	if signatureB64 == "" {
		return ErrMissingSignature
	}
	sig, err := decodeSignature(signatureB64, pub.Size())
	if err != nil {
		return err
	}
	return verifyDecoded(pub, signed, sig)
}

// decodeSignature decodes standard base64 and checks the length, refusing
// text far longer than any signature of size bytes before decoding it.
func decodeSignature(s string, size int) ([]byte, error) {
	if size <= 0 || len(s) > base64.StdEncoding.EncodedLen(size)+8 {
		return nil, ErrMalformedSignature
	}
	sig, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(sig) != size {
		return nil, ErrMalformedSignature
	}
	return sig, nil
}

func verifyDecoded(pub *rsa.PublicKey, signed, sig []byte) error {
	sum := sha256.Sum256(signed)
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		return ErrBadSignature
	}
	return nil
}

// verifyAny verifies against each key in turn. It returns nil on the first
// match, else ErrMalformedSignature when the text fits no key's size, else
// ErrBadSignature.
func verifyAny(keys []*rsa.PublicKey, signed []byte, signatureB64 string) error {
	result := error(ErrMalformedSignature)
	for _, pub := range keys {
		if pub == nil || pub.N == nil {
			continue
		}
		sig, err := decodeSignature(signatureB64, pub.Size())
		if err != nil {
			continue
		}
		if verifyDecoded(pub, signed, sig) == nil {
			return nil
		}
		result = ErrBadSignature
	}
	return result
}
