package testserver

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// KeySpec says how a rule derives the key a request is counted against. It is a "+"-separated
// combination of parts; each part contributes "label:value" to the key, joined with "+":
//
//	global          the whole server: one key for every request ("global"); must stand alone
//	ip              the client IP ("ip:203.0.113.7"; IPv6 grouped by /64: "ip:2001:db8:1:2::/64");
//	                X-Forwarded-For and X-Real-IP are honoured only from trusted proxies
//	                (see WithTrustedProxies), never by default
//	header:NAME     a request header's value, labelled with the lower-case name
//	                ("header:X-API-Key" gives "x-api-key:abc")
//	query:NAME      a query parameter's value, labelled with the name ("query:api_key" gives
//	                "api_key:abc")
//	route           the method and path ("route:GET /v1/items")
//	user            shorthand for "user=header:X-User-ID" ("user:241531")
//	LABEL=PART      PART (header:NAME or query:NAME) with its own label ("user=header:X-User"
//	                gives "user:241531")
//
// So "user+route" yields keys like "user:241531+route:GET /v1/items". A missing header or query
// value counts as the empty value: all requests without it share one key. Values longer than 128
// bytes are shortened to a prefix plus a hash, so a client cannot make keys arbitrarily large.
// The empty KeySpec means "global". Tiers (see [Rule]) are looked up by the whole key first, then
// by each "label:value" part in order.
type KeySpec string

// Key specs for the common cases.
const (
	KeyGlobal KeySpec = "global"
	KeyIP     KeySpec = "ip"
	KeyRoute  KeySpec = "route"
	KeyUser   KeySpec = "user"
)

// KeyHeader returns the KeySpec "header:NAME".
func KeyHeader(name string) KeySpec { return KeySpec("header:" + name) }

// maxKeyValue is the longest header or query value used verbatim in a key.
const maxKeyValue = 128

type keyPartKind int

const (
	partIP keyPartKind = iota
	partHeader
	partQuery
	partRoute
)

type keyPart struct {
	kind  keyPartKind
	label string // "ip", "route", or the header/query label
	name  string // canonical header name or query parameter name
}

// keyDeriver computes a request's key and its parts (for tier lookup).
type keyDeriver struct {
	global bool
	parts  []keyPart
	fn     func(*http.Request) string
}

// parseKeySpec validates spec and compiles it.
func parseKeySpec(spec KeySpec) (*keyDeriver, error) {
	s := strings.TrimSpace(string(spec))
	if s == "" || s == string(KeyGlobal) {
		return &keyDeriver{global: true}, nil
	}
	d := &keyDeriver{}
	seen := map[string]bool{}
	for raw := range strings.SplitSeq(s, "+") {
		p, err := parseKeyPart(strings.TrimSpace(raw))
		if err != nil {
			return nil, err
		}
		if seen[p.label] {
			return nil, fmt.Errorf("%w: label %q used twice in %q", ErrInvalidKey, p.label, s)
		}
		seen[p.label] = true
		d.parts = append(d.parts, p)
	}
	return d, nil
}

func parseKeyPart(s string) (keyPart, error) {
	switch s {
	case "":
		return keyPart{}, fmt.Errorf("%w: empty part (want global, ip, route, user, header:NAME or query:NAME)", ErrInvalidKey)
	case string(KeyGlobal):
		return keyPart{}, fmt.Errorf("%w: global cannot be combined with other parts", ErrInvalidKey)
	case string(KeyIP):
		return keyPart{kind: partIP, label: "ip"}, nil
	case string(KeyRoute):
		return keyPart{kind: partRoute, label: "route"}, nil
	case string(KeyUser):
		return keyPart{kind: partHeader, label: "user", name: "X-User-Id"}, nil
	}
	label := ""
	if i := strings.IndexByte(s, '='); i >= 0 {
		label, s = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		if !validToken(label) {
			return keyPart{}, fmt.Errorf("%w: bad label %q (want letters, digits, '-', '_' or '.')", ErrInvalidKey, label)
		}
	}
	kind, name, ok := strings.Cut(s, ":")
	if !ok {
		return keyPart{}, fmt.Errorf("%w: unknown part %q (want global, ip, route, user, header:NAME or query:NAME)", ErrInvalidKey, s)
	}
	name = strings.TrimSpace(name)
	switch kind {
	case "header":
		if !validToken(name) {
			return keyPart{}, fmt.Errorf("%w: bad header name %q", ErrInvalidKey, name)
		}
		if label == "" {
			label = strings.ToLower(name)
		}
		return keyPart{kind: partHeader, label: label, name: textproto.CanonicalMIMEHeaderKey(name)}, nil
	case "query":
		if name == "" || strings.ContainsAny(name, "&=+ \t") {
			return keyPart{}, fmt.Errorf("%w: bad query parameter name %q", ErrInvalidKey, name)
		}
		if label == "" {
			label = name
		}
		return keyPart{kind: partQuery, label: label, name: name}, nil
	}
	return keyPart{}, fmt.Errorf("%w: unknown part %q (want global, ip, route, user, header:NAME or query:NAME)", ErrInvalidKey, s)
}

// validToken reports whether s is a non-empty HTTP token-ish name.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.':
		default:
			return false
		}
	}
	return true
}

// derive returns the request's key and, when wantParts, its "label:value" parts (nil for global
// and key funcs). The parts are substrings of the key: the key is the one allocation.
func (d *keyDeriver) derive(r *http.Request, ips *ipResolver, wantParts bool) (string, []string) {
	if d.fn != nil {
		return d.fn(r), nil
	}
	if d.global {
		return string(KeyGlobal), nil
	}
	var (
		buf    [128]byte
		endBuf [4]int
	)
	b, ends := d.appendKey(buf[:0], endBuf[:0], r, ips)
	key := string(b)
	if !wantParts {
		return key, nil
	}
	parts := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		parts[i] = key[start:end]
		start = end + 1
	}
	return key, parts
}

// appendKey appends the request's key to dst, and to ends where each of its parts ends in dst.
// The deriver must have parts (not be global nor a key func).
func (d *keyDeriver) appendKey(dst []byte, ends []int, r *http.Request, ips *ipResolver) ([]byte, []int) {
	b := dst
	for i, p := range d.parts {
		if i > 0 {
			b = append(b, '+')
		}
		b = append(b, p.label...)
		b = append(b, ':')
		switch p.kind {
		case partIP:
			b = ips.appendClientKey(b, r)
		case partHeader:
			start := len(b)
			for j, v := range r.Header[p.name] {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, v...)
			}
			b = appendShortened(b[:start], b[start:])
		case partQuery:
			if r.URL != nil {
				b = appendShortened(b, []byte(r.URL.Query().Get(p.name)))
			}
		case partRoute:
			b = append(b, r.Method...)
			b = append(b, ' ')
			if r.URL != nil {
				b = appendShortened(b, []byte(r.URL.Path))
			}
		}
		ends = append(ends, len(b))
	}
	return b, ends
}

// appendShortened appends v to dst when it is short, and otherwise a prefix of v and its 64-bit
// FNV hash. v may be dst's own tail beyond len(dst) (it is read before dst is written past it).
func appendShortened(dst, v []byte) []byte {
	if len(v) <= maxKeyValue {
		return append(dst, v...)
	}
	h := fnv.New64a()
	h.Write(v)
	dst = append(dst, v[:maxKeyValue-17]...)
	dst = append(dst, '#')
	return strconv.AppendUint(dst, h.Sum64(), 16)
}
