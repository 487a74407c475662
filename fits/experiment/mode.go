package experiment

import (
	"fmt"
	"strings"
)

// Mode chooses between an experiment's two recipes.
type Mode string

const (
	// Quick trains the stand-in recipe on data this machine has (Experiment.Quick).
	Quick Mode = "quick"
	// Full trains the paper's recipe on the real dataset (Experiment.Full).
	Full Mode = "full"
)

// Modes lists the valid modes.
func Modes() []Mode { return []Mode{Quick, Full} }

// ParseMode returns the mode named s ("quick" or "full", any case, surrounding spaces ignored).
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.ToLower(strings.TrimSpace(s))) {
	case Quick:
		return Quick, nil
	case Full:
		return Full, nil
	}
	return "", fmt.Errorf("unknown mode %q (valid: quick, full)", s)
}
