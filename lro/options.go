package lro

import (
	"fmt"
	"net/http"
	"time"
)

// Defaults of the interval between polls when the server sends no Retry-After.
const (
	// DefaultInterval is the first wait: an operation that takes under a second is seen done at
	// the first poll, and one that takes minutes costs a handful of polls while the interval grows.
	DefaultInterval = time.Second
	// DefaultMaxInterval bounds the doubling interval: 30 s, the polling frequency Azure's SDKs use
	// by default, so an operation of an hour costs about 125 polls and is seen done at most 30 s
	// late.
	DefaultMaxInterval = 30 * time.Second
)

// An Option configures Wait.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	interval, maxInterval time.Duration
	header                http.Header
}

// WithInterval sets the first wait before a poll when the server sends no Retry-After (default
// DefaultInterval); each further wait doubles, up to WithMaxInterval. d must be positive.
func WithInterval(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithInterval(%v): must be positive", ErrInvalidOption, d)
		}
		c.interval = d
		return nil
	})
}

// WithMaxInterval sets the longest wait between polls when the server sends no Retry-After
// (default DefaultMaxInterval); a Retry-After is honoured whatever its length, within the
// context's deadline. d must be positive, and at least WithInterval's.
func WithMaxInterval(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithMaxInterval(%v): must be positive", ErrInvalidOption, d)
		}
		c.maxInterval = d
		return nil
	})
}

// WithHeader adds h's fields to every poll (an Authorization, an API version); default none. h is
// copied.
func WithHeader(h http.Header) Option {
	return optionFunc(func(c *config) error {
		if c.header == nil {
			c.header = make(http.Header, len(h))
		}
		for k, vs := range h {
			for _, v := range vs {
				c.header.Add(k, v)
			}
		}
		return nil
	})
}
