package testserver

import "fmt"

// Mode is how a rule enforces its limit. The zero value "" means [ModeHard].
type Mode string

// The modes.
const (
	// ModeHard never admits above the limit.
	ModeHard Mode = "hard"
	// ModeSoft admits up to Limit*(100+SoftPercent)/100 per window (rounded down; the burst is
	// scaled in proportion), while advertising Limit.
	ModeSoft Mode = "soft"
	// ModeElastic admits above the limit, up to Ceiling per window, only while the server has
	// spare capacity: fewer requests in flight than the rule's Capacity.
	ModeElastic Mode = "elastic"
	// ModeShadow never denies: a request the limit would deny is admitted, counted as shadowed and
	// marked with the header Steady-Shadow: would-deny. It consumes nothing from the limit.
	ModeShadow Mode = "shadow"
)

// Modes lists the valid modes.
func Modes() []Mode { return []Mode{ModeHard, ModeSoft, ModeElastic, ModeShadow} }

// normalize returns the mode with "" mapped to ModeHard, or an error for an unknown mode.
func (m Mode) normalize() (Mode, error) {
	switch m {
	case "":
		return ModeHard, nil
	case ModeHard, ModeSoft, ModeElastic, ModeShadow:
		return m, nil
	}
	return "", fmt.Errorf("%w: %q (want hard, soft, elastic or shadow)", ErrInvalidMode, string(m))
}
