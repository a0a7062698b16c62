package mcp

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// maxTokenLen bounds the Mcp-Session-Id header the handler tries to decode.
const maxTokenLen = 4096

// sessionToken is the JSON inside an Mcp-Session-Id header. It carries the
// protocol state of a client so that no server-side session map is needed.
type sessionToken struct {
	ID      string       `json:"id"`
	Version string       `json:"v"`
	Client  *tokenClient `json:"c,omitempty"`
}

type tokenClient struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// session is a parsed token: what a request inherits from its initialize.
type session struct {
	version string
	client  *metadata.ClientInfo
}

// errInvalidToken is returned for any Mcp-Session-Id that does not parse.
var errInvalidToken = errors.New("invalid client state")

// newSessionToken mints the Mcp-Session-Id of an initialize response.
func newSessionToken(version string, client *metadata.ClientInfo) (string, error) {
	id, err := newID()
	if err != nil {
		return "", err
	}
	t := sessionToken{ID: id, Version: version}
	if client != nil {
		t.Client = &tokenClient{Name: client.Name, Version: client.Version}
	}
	data, err := json.Marshal(&t)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// parseSessionToken decodes an Mcp-Session-Id made by newSessionToken.
// versions is the list of revisions the token's version must be one of.
func parseSessionToken(token string, versions []string) (*session, error) {
	token = strings.TrimRight(token, "=")
	if token == "" || len(token) > maxTokenLen {
		return nil, errInvalidToken
	}
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, errInvalidToken
	}
	var t sessionToken
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, errInvalidToken
	}
	i := slices.Index(versions, t.Version)
	if t.ID == "" || i < 0 {
		return nil, errInvalidToken
	}
	s := &session{version: versions[i]}
	if t.Client != nil {
		s.client = &metadata.ClientInfo{Name: t.Client.Name, Version: t.Client.Version}
	}
	return s, nil
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// newID returns 16 characters of [a-z0-9], uniformly drawn by rejection
// sampling, like the extension's client ids.
func newID() (string, error) {
	const n = 16
	// 252 is the largest multiple of 36 below 256: bytes at or above it are
	// rejected so that every character is equally likely.
	const limit = 252
	out := make([]byte, 0, n)
	var pool [32]byte
	for len(out) < n {
		if _, err := rand.Read(pool[:]); err != nil {
			return "", err
		}
		for _, b := range pool {
			if b >= limit {
				continue
			}
			out = append(out, idAlphabet[int(b)%len(idAlphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return string(out), nil
}
