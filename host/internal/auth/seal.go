package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// KeySize is the size of a sealing key: AES-256.
const KeySize = 32

// MaxTokenLen bounds the text of a token Open tries to open.
const MaxTokenLen = 4096

// tokenVersion is the first byte of every sealed token.
const tokenVersion = 1

// Errors of [Sealer.Open]; reach them with errors.Is.
var (
	// ErrInvalidToken is any token that does not open: not base64url, too
	// short or long, changed, forged, or sealed with another key or purpose.
	ErrInvalidToken = errors.New("invalid token")
	// ErrExpiredToken is a genuine token past its expiry.
	ErrExpiredToken = errors.New("expired token")
)

// Sealer seals and opens tokens with one AES-256-GCM key. It is safe for
// concurrent use.
type Sealer struct {
	aead cipher.AEAD
	now  func() time.Time
}

// NewSealer returns a Sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("creating the token sealer: the key has %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("creating the token sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("creating the token sealer: %w", err)
	}
	return &Sealer{aead: aead, now: time.Now}, nil
}

// NewRandomSealer returns a Sealer with a fresh random key: its tokens open
// only in this process.
func NewRandomSealer() (*Sealer, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("creating the token sealer: %w", err)
	}
	return NewSealer(key)
}

// ParseKey reads a sealing key written as 64 hex digits or as the standard
// base64 of 32 bytes, as the Functions host reads WEBSITE_AUTH_ENCRYPTION_KEY.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	if key, err := base64.StdEncoding.DecodeString(s); err == nil && len(key) == KeySize {
		return key, nil
	}
	return nil, errors.New("a sealing key is 64 hex digits or the base64 of 32 bytes")
}

// Seal returns base64url(version | nonce | AES-GCM(expiry | payload)) with
// purpose as additional data; the token expires after ttl.
func (s *Sealer) Seal(purpose string, payload []byte, ttl time.Duration) (string, error) {
	ns := s.aead.NonceSize()
	plain := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint64(plain, uint64(s.now().Add(ttl).Unix()))
	copy(plain[8:], payload)
	out := make([]byte, 1+ns, 1+ns+len(plain)+s.aead.Overhead())
	out[0] = tokenVersion
	if _, err := rand.Read(out[1 : 1+ns]); err != nil {
		return "", fmt.Errorf("sealing a token: %w", err)
	}
	out = s.aead.Seal(out, out[1:1+ns], plain, []byte(purpose))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the payload of a token made by Seal with the same key and
// purpose. It fails with ErrInvalidToken or ErrExpiredToken and never panics.
// Its text is at most MaxTokenLen characters.
func (s *Sealer) Open(purpose, token string) ([]byte, error) {
	payload, _, err := s.OpenExpiry(purpose, token)
	return payload, err
}

// OpenExpiry is Open that also returns when the token expires.
func (s *Sealer) OpenExpiry(purpose, token string) ([]byte, time.Time, error) {
	return s.open(purpose, token, MaxTokenLen)
}

// SealedLen returns the length of the text of a token whose payload has
// n bytes.
func (s *Sealer) SealedLen(n int) int {
	return base64.RawURLEncoding.EncodedLen(1 + s.aead.NonceSize() + 8 + n + s.aead.Overhead())
}

// OpenSized is OpenExpiry for tokens whose payload may have up to
// maxPayload bytes (a longer text is refused before it is decoded),
// where MaxTokenLen is too small.
func (s *Sealer) OpenSized(purpose, token string, maxPayload int) ([]byte, time.Time, error) {
	return s.open(purpose, token, s.SealedLen(maxPayload))
}

func (s *Sealer) open(purpose, token string, maxLen int) ([]byte, time.Time, error) {
	token = strings.TrimRight(token, "=")
	if token == "" || len(token) > maxLen {
		return nil, time.Time{}, ErrInvalidToken
	}
	data, err := base64.RawURLEncoding.DecodeString(token)
	ns := s.aead.NonceSize()
	if err != nil || len(data) < 1+ns+s.aead.Overhead()+8 || data[0] != tokenVersion {
		return nil, time.Time{}, ErrInvalidToken
	}
	plain, err := s.aead.Open(nil, data[1:1+ns], data[1+ns:], []byte(purpose))
	if err != nil || len(plain) < 8 {
		return nil, time.Time{}, ErrInvalidToken
	}
	exp := time.Unix(int64(binary.BigEndian.Uint64(plain)), 0)
	if !s.now().Before(exp) {
		return nil, exp, ErrExpiredToken
	}
	return plain[8:], exp, nil
}
