package redisstore

import (
	"strconv"
	"strings"
)

// Key suffixes: every state has a string key holding its three registers; the sliding log also
// has a sorted set.
const (
	suffixState = ":s"
	suffixLog   = ":z"
)

// tagOf returns the hash tag of a check: the configured function's (default: the key), cut at its
// first '}' as Redis does, and "_" when empty.
func (c *config) tagOf(rule, key string) string {
	tag := key
	if c.hashTag != nil {
		tag = c.hashTag(rule, key)
	}
	if i := strings.IndexByte(tag, '}'); i >= 0 {
		tag = tag[:i]
	}
	if tag == "" {
		tag = "_"
	}
	return tag
}

// keyName returns the Redis key of one state:
//
//	<prefix>{<tag>}<len(scope)>:<scope>:<key><suffix>
//
// for example steady:{ip:203.0.113.7}37:per-ip|token-bucket|100|60000000000|0:ip:203.0.113.7:s.
// The name is injective in (scope, key, suffix): the prefix is fixed and brace-free, the tag has no
// '}', the scope's length is spelled out, and the suffix is the fixed-length end. The hash tag is
// the part in braces, so every state of one tag lives in one Cluster slot.
func (c *config) keyName(tag, scope, key, suffix string) string {
	var b strings.Builder
	b.Grow(len(c.prefix) + len(tag) + len(scope) + len(key) + len(suffix) + 8)
	b.WriteString(c.prefix)
	b.WriteByte('{')
	b.WriteString(tag)
	b.WriteByte('}')
	b.WriteString(strconv.Itoa(len(scope)))
	b.WriteByte(':')
	b.WriteString(scope)
	b.WriteByte(':')
	b.WriteString(key)
	b.WriteString(suffix)
	return b.String()
}
