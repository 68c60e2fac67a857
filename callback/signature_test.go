package callback

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublishedKeyFingerprint(t *testing.T) {
	block, _ := pem.Decode([]byte(PublishedKeyPEM))
	require.NotNil(t, block)
	require.Equal(t, "PUBLIC KEY", block.Type)
	sum := sha256.Sum256(block.Bytes)
	// The value given in the service notes.
	assert.Equal(t, "694229344e0b037a25f6f16f032c8808609b18f92739d34c691269ec994e737c", hex.EncodeToString(sum[:]))
	assert.Equal(t, PublishedKeyFingerprint, hex.EncodeToString(sum[:]))

	pub := PublishedKey()
	assert.Equal(t, PublishedKeyFingerprint, Fingerprint(pub))
	assert.Equal(t, 1024, pub.N.BitLen())
	// Each call is a fresh value.
	assert.NotSame(t, pub, PublishedKey())
}

func TestFingerprintOfNothing(t *testing.T) {
	assert.Empty(t, Fingerprint(nil))
	assert.Empty(t, Fingerprint(&rsa.PublicKey{}))
}

func TestVerifySignature(t *testing.T) {
	a, b := testKeys(t)
	data := []byte("https://shop.example/callback?uuid=1&pending=0")
	good := sign(t, a, data)
	raw, err := base64.StdEncoding.DecodeString(good)
	require.NoError(t, err)

	tests := []struct {
		name string
		pub  *rsa.PublicKey
		data []byte
		sig  string
		want error
	}{
		{"valid", &a.PublicKey, data, good, nil},
		{"nil key", nil, data, good, ErrNoPublicKey},
		{"empty key", &rsa.PublicKey{}, data, good, ErrNoPublicKey},
		{"missing", &a.PublicKey, data, "", ErrMissingSignature},
		{"not base64", &a.PublicKey, data, "!!!not*base64!!!", ErrMalformedSignature},
		{"url-safe alphabet", &a.PublicKey, data, base64.URLEncoding.EncodeToString(raw) + "_-", ErrMalformedSignature},
		{"too short", &a.PublicKey, data, base64.StdEncoding.EncodeToString(raw[:64]), ErrMalformedSignature},
		{"too long", &a.PublicKey, data, base64.StdEncoding.EncodeToString(append(raw, 0)), ErrMalformedSignature},
		{"huge", &a.PublicKey, data, strings.Repeat("A", 1<<20), ErrMalformedSignature},
		{"other key", &b.PublicKey, data, good, ErrBadSignature},
		{"other data", &a.PublicKey, append(data, '1'), good, ErrBadSignature},
		{"signed by other key", &a.PublicKey, data, sign(t, b, data), ErrBadSignature},
		{"zero signature", &a.PublicKey, data, base64.StdEncoding.EncodeToString(make([]byte, 128)), ErrBadSignature},
		{"empty data", &a.PublicKey, nil, good, ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifySignature(tt.pub, tt.data, tt.sig)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
	// A malformed signature is a bad signature too.
	assert.ErrorIs(t, VerifySignature(&a.PublicKey, data, "@@"), ErrBadSignature)
	assert.NotErrorIs(t, ErrBadSignature, ErrMalformedSignature)
}

// flips returns data with bit 0 of byte i inverted, for every i, and with
// other bits at a few positions.
func flips(data []byte) [][]byte {
	var out [][]byte
	for i := range data {
		for _, bit := range []byte{0x01, 0x80} {
			c := append([]byte(nil), data...)
			c[i] ^= bit
			out = append(out, c)
		}
	}
	return out
}

func TestVerifySignatureEveryByteFlipped(t *testing.T) {
	a, _ := testKeys(t)
	for _, name := range []string{"get_confirmed.target", "post_form_confirmed.body", "post_json_confirmed.json"} {
		data := []byte(fixture(t, name))
		if strings.HasPrefix(name, "get_") {
			data = append([]byte(testPublicURL), data...)
		}
		sig := sign(t, a, data)
		require.NoError(t, VerifySignature(&a.PublicKey, data, sig))
		for i, c := range flips(data) {
			require.ErrorIs(t, VerifySignature(&a.PublicKey, c, sig), ErrBadSignature, "%s: flip %d", name, i)
		}
		// Dropping or adding a byte is rejected too.
		assert.ErrorIs(t, VerifySignature(&a.PublicKey, data[:len(data)-1], sig), ErrBadSignature)
		assert.ErrorIs(t, VerifySignature(&a.PublicKey, append(data, '&'), sig), ErrBadSignature)
		// Every flipped bit of the signature itself is rejected.
		raw, err := base64.StdEncoding.DecodeString(sig)
		require.NoError(t, err)
		for i, c := range flips(raw) {
			require.Error(t, VerifySignature(&a.PublicKey, data, base64.StdEncoding.EncodeToString(c)), "signature flip %d", i)
		}
	}
}

func TestVerifyAnyPrefersMatchOverMalformed(t *testing.T) {
	a, _ := testKeys(t)
	big, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	data := []byte("body")
	keys := []*rsa.PublicKey{&big.PublicKey, nil, &a.PublicKey}
	assert.NoError(t, verifyAny(keys, data, sign(t, a, data)))
	assert.ErrorIs(t, verifyAny(keys, data, sign(t, big, []byte("other"))), ErrBadSignature)
	assert.ErrorIs(t, verifyAny(keys, data, "AAAA"), ErrMalformedSignature)
	assert.ErrorIs(t, verifyAny(nil, data, sign(t, a, data)), ErrMalformedSignature)
}
