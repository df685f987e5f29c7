// Package secret owns the encryption of secrets kept at rest (Meta access
// tokens): AES-256-GCM with keys derived from the server's secret_key, and
// the key file a server without secret_key keeps next to its SQLite
// database. Standard library only.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Prefix marks a value sealed by a Box, version 1. A stored value without
// it is clear text from before encryption.
const Prefix = "enc1:"

// MinKeyLength is the shortest secret_key accepted: it guards tokens and
// signs form tokens, so it must not be guessable.
const MinKeyLength = 32

// ErrDecrypt says a sealed value could not be opened: another key sealed
// it, or it was damaged.
var ErrDecrypt = errors.New("secret: cannot decrypt: the value was sealed with another secret_key or is damaged")

// Box seals and opens values with keys derived from one secret.
type Box struct {
	aead     cipher.AEAD
	nonceKey []byte
}

// NewBox derives the encryption keys from secret with HKDF-SHA256, each
// under its own label, so the secret can serve other purposes too.
func NewBox(secret string) (*Box, error) {
	if secret == "" {
		return nil, errors.New("secret: empty key")
	}
	encKey, err := hkdf.Key(sha256.New, []byte(secret), nil, "cleanads access token encryption v1", 32)
	if err != nil {
		return nil, err
	}
	nonceKey, err := hkdf.Key(sha256.New, []byte(secret), nil, "cleanads access token nonce v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(encKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead, nonceKey: nonceKey}, nil
}

// Seal encrypts plain bound to context (e.g. the site id: a sealed value
// moved to another row does not open) and returns Prefix + base64 of nonce
// and ciphertext. The nonce is synthetic, an HMAC of context and plain, so
// the same value seals to the same text: SQL can tell whether a token
// changed, and a nonce repeats only with the same plain text, which GCM
// tolerates. An empty plain stays empty.
func (b *Box) Seal(context, plain string) string {
	if plain == "" {
		return ""
	}
	m := hmac.New(sha256.New, b.nonceKey)
	m.Write([]byte(context))
	m.Write([]byte{0})
	m.Write([]byte(plain))
	nonce := m.Sum(nil)[:b.aead.NonceSize()]
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(context))
	return Prefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value sealed for context. A value without Prefix is
// returned as it is (clear text stored before encryption).
func (b *Box) Open(context, stored string) (string, error) {
	rest, ok := strings.CutPrefix(stored, Prefix)
	if !ok {
		return stored, nil
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", ErrDecrypt
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(context))
	if err != nil {
		return "", ErrDecrypt
	}
	return string(plain), nil
}

// IsSealed tells whether a stored value is encrypted.
func IsSealed(stored string) bool { return strings.HasPrefix(stored, Prefix) }

// KeyFileName is the key file a server without secret_key keeps next to
// its SQLite database.
const KeyFileName = "secret.key"

// LoadOrCreateKeyFile returns the key kept in path, creating the file with
// 32 random bytes (hex, mode 0600) when it does not exist. A file readable
// by others is refused: it guards the Meta tokens.
func LoadOrCreateKeyFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		var k [32]byte
		if _, err := rand.Read(k[:]); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("secret: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			// Another process made it first: use theirs.
			return LoadOrCreateKeyFile(path)
		}
		if err != nil {
			return "", fmt.Errorf("secret: create key file: %w", err)
		}
		key := hex.EncodeToString(k[:])
		if _, err := f.WriteString(key + "\n"); err != nil {
			f.Close()
			return "", fmt.Errorf("secret: write key file: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return "", fmt.Errorf("secret: write key file: %w", err)
		}
		return key, f.Close()
	}
	if err != nil {
		return "", fmt.Errorf("secret: key file: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("secret: key file %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	key := strings.TrimSpace(string(b))
	if len(key) < MinKeyLength {
		return "", fmt.Errorf("secret: key file %s is damaged (too short)", path)
	}
	return key, nil
}
