package dialects

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"strings"
	"sync/atomic"
)

// Keyer derives a throttle key from a request: its host, and a short hash of its credential, so
// that two API keys calling one host are paced apart (each key has its own quota at most APIs:
// GitHub per token, OpenAI per organization key, Discord per bot token) while the secret itself
// never appears in the key, a log line or a metric label.
//
// The zero Keyer hashes the Authorization header with SHA-256. A Keyer is a plain value, safe for
// concurrent use.
type Keyer struct {
	// Header is the header that carries the credential; "" means Authorization. APIs that take an
	// API key in a header of their own name it here ("X-Api-Key", "Api-Key", "X-Shopify-Access-Token").
	Header string
	// Salt, when set, keys the hash (HMAC-SHA-256 with Salt as the key) instead of hashing the
	// credential alone. Without a salt, anyone who sees a key can test guesses of a low-entropy
	// credential (a Basic-auth password) against it offline; with a secret salt (for example random
	// bytes drawn once per process) they cannot. Keys are stable for as long as the salt is.
	Salt []byte
}

// credentialHashLen is the number of hex digits of the hash kept in a key: 16 digits are 64 bits,
// so two credentials on one host collide with probability 2^-64 per pair, while the key stays
// short enough for a log line.
const credentialHashLen = 16

// Key returns the throttle key of req: the lower-cased request host (URL.Host, else Host, with its
// port), followed, when the credential header is set and not empty, by "#" and the first 16 hex
// digits of the SHA-256 (or, with a Salt, HMAC-SHA-256) of its values. A request without the
// header keys by its host alone. A nil request gives "".
func (k Keyer) Key(req *http.Request) string {
	if req == nil {
		return ""
	}
	return k.key(rawHost(req), k.credential(req))
}

// Func returns k.Key as a key function (for throttle.WithKeyFunc) that remembers the last
// credential it hashed: a client sends the same credential to a host request after request, and
// hashing it for each would cost more than the rest of the stack's work on the request (SHA-256
// and six allocations). A request to the host of the last credentialed request, with the same
// single credential value, gets its key again without hashing or allocating; any other is keyed
// by Key, and a credentialed one remembered in its place (one small allocation). The function
// holds that credential, as the requests that carry it do. It works on a copy of k (and of its
// Salt) and is safe for concurrent use.
func (k Keyer) Func() func(*http.Request) string {
	k.Salt = bytes.Clone(k.Salt)
	var last atomic.Pointer[keyMemo]
	return func(req *http.Request) string {
		if req == nil {
			return ""
		}
		host, values := rawHost(req), k.credential(req)
		if len(values) != 1 {
			return k.key(host, values) // none (no hashing), or several (rare): not remembered
		}
		if m := last.Load(); m != nil && m.host == host && m.credential == values[0] {
			return m.key
		}
		key := k.key(host, values)
		last.Store(&keyMemo{host: host, credential: values[0], key: key})
		return key
	}
}

// keyMemo is a key Func made: of a request to host (as the request names it) with one credential
// value.
type keyMemo struct{ host, credential, key string }

// rawHost is the host req is keyed by, before lower-casing: URL.Host, else Host.
func rawHost(req *http.Request) string {
	if req.URL != nil && req.URL.Host != "" {
		return req.URL.Host
	}
	return req.Host
}

// credential returns the values of req's credential header; nil when it has none, or one empty
// value.
func (k Keyer) credential(req *http.Request) []string {
	var values []string
	if k.Header == "" {
		values = req.Header["Authorization"] // canonical already: no canonicalising per request
	} else {
		values = req.Header.Values(k.Header)
	}
	if len(values) == 1 && values[0] == "" {
		return nil
	}
	return values
}

// key is the key of a request to host with the credential values.
func (k Keyer) key(host string, values []string) string {
	host = strings.ToLower(host)
	if len(values) == 0 {
		return host
	}
	var h hash.Hash
	if len(k.Salt) > 0 {
		h = hmac.New(sha256.New, k.Salt)
	} else {
		h = sha256.New()
	}
	for i, v := range values {
		if i > 0 {
			h.Write([]byte{0}) // values are separated by a byte no header value carries
		}
		h.Write([]byte(v))
	}
	var sum [sha256.Size]byte
	return host + "#" + hex.EncodeToString(h.Sum(sum[:0]))[:credentialHashLen]
}

// CredentialKey is shorthand for Keyer{Header: header}.Key(req): the host and a SHA-256 hash of
// the credential in header ("" means Authorization).
func CredentialKey(req *http.Request, header string) string {
	return Keyer{Header: header}.Key(req)
}
