// Package sealed keeps a short secret that must be read back (a customer's OTP between its
// registration and the confirmation that sends it upstream) encrypted at rest: AES-256-GCM with a
// key derived (SHA-256) from a configured secret, a fresh random nonce per value, and the
// value's context (for example the authorization id) as additional data, so a sealed value copied
// to another record does not open there.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// ErrOpen: the value was not sealed by this key for this context.
var ErrOpen = errors.New("sealed: value cannot be opened")

// Box seals and opens values with one key. It is safe for concurrent use.
type Box struct{ aead cipher.AEAD }

// New derives the key from secret, which must not be empty.
func New(secret string) (*Box, error) {
	if secret == "" {
		return nil, errors.New("sealed: empty secret")
	}
	key := sha256.Sum256([]byte(secret))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain for context; the result is base64 text.
func (b *Box) Seal(plain, context string) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand never fails on supported platforms
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(context))
	return base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts what Seal gave for context.
func (b *Box) Open(sealed, context string) (string, error) {
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n {
		return "", ErrOpen
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(context))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}
