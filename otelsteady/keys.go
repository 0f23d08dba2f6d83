package otelsteady

import "sync"

// keySet names at most max keys: the first max distinct keys it is asked about keep their name,
// every later one is OtherKey. It is safe for concurrent use.
type keySet struct {
	mu   sync.RWMutex
	max  int
	keys map[string]struct{}
	list []string // in order of arrival, for the gauges
}

func newKeySet(max int) *keySet { return &keySet{max: max, keys: make(map[string]struct{})} }

// name returns the attribute value for key: key itself while there is room, else OtherKey.
func (s *keySet) name(key string) string {
	s.mu.RLock()
	_, ok := s.keys[key]
	full := len(s.keys) >= s.max
	s.mu.RUnlock()
	if ok {
		return key
	}
	if full {
		return OtherKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[key]; ok {
		return key
	}
	if len(s.keys) >= s.max {
		return OtherKey
	}
	s.keys[key] = struct{}{}
	s.list = append(s.list, key)
	return key
}

// named returns the keys that keep their name, in order of arrival.
func (s *keySet) named() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.list[:len(s.list):len(s.list)]
}
