package request

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// nilCtx is a nil context, for the setters' and From's documented handling of one.
var nilCtx context.Context

func TestSettings(t *testing.T) {
	bg := context.Background()
	tests := []struct {
		name    string
		ctx     context.Context
		check   func(t *testing.T, s Settings)
		invalid bool
	}{
		{"none", bg, func(t *testing.T, s Settings) {
			_, ok := s.Attempts()
			assert.False(t, ok)
			_, ok = s.Key()
			assert.False(t, ok)
		}, false},
		{"attempts", WithAttempts(bg, 1), func(t *testing.T, s Settings) {
			n, ok := s.Attempts()
			assert.True(t, ok)
			assert.Equal(t, 1, n)
		}, false},
		{"attempts 0", WithAttempts(bg, 0), func(t *testing.T, s Settings) {
			_, ok := s.Attempts()
			assert.False(t, ok, "not stored")
		}, true},
		{"max wait 0 is a value", WithMaxWait(bg, 0), func(t *testing.T, s Settings) {
			d, ok := s.MaxWait()
			assert.True(t, ok)
			assert.Zero(t, d)
		}, false},
		{"negative max wait", WithMaxWait(bg, -time.Second), nil, true},
		{"attempt timeout", WithAttemptTimeout(bg, time.Second), func(t *testing.T, s Settings) {
			d, ok := s.AttemptTimeout()
			assert.True(t, ok)
			assert.Equal(t, time.Second, d)
		}, false},
		{"negative attempt timeout", WithAttemptTimeout(bg, -1), nil, true},
		{"key", WithKey(bg, "tenant-42"), func(t *testing.T, s Settings) {
			k, ok := s.Key()
			assert.True(t, ok)
			assert.Equal(t, "tenant-42", k)
		}, false},
		{"empty key", WithKey(bg, ""), nil, true},
		{"cost", WithCost(bg, 250), func(t *testing.T, s Settings) {
			n, ok := s.Cost()
			assert.True(t, ok)
			assert.Equal(t, 250, n)
		}, false},
		{"cost 0", WithCost(bg, 0), nil, true},
		{"layered: later wins, earlier kept", WithAttempts(WithKey(WithAttempts(bg, 3), "k"), 2), func(t *testing.T, s Settings) {
			n, _ := s.Attempts()
			k, _ := s.Key()
			assert.Equal(t, 2, n)
			assert.Equal(t, "k", k)
		}, false},
		{"nil ctx", WithAttempts(nilCtx, 2), func(t *testing.T, s Settings) {
			n, ok := s.Attempts()
			assert.True(t, ok)
			assert.Equal(t, 2, n)
		}, false},
		{"an invalid one stays invalid under later valid ones", WithKey(WithCost(bg, -1), "k"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := From(tt.ctx)
			if tt.invalid {
				assert.ErrorIs(t, s.Err(), ErrInvalid)
			} else {
				assert.NoError(t, s.Err())
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestSettingsDoNotLeakToTheParent(t *testing.T) {
	parent := WithAttempts(context.Background(), 3)
	_ = WithAttempts(parent, 1)
	n, _ := From(parent).Attempts()
	assert.Equal(t, 3, n)
	assert.Equal(t, Settings{}, From(nilCtx))
}
