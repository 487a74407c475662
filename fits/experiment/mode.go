package experiment

import (
	"strings"

	"github.com/fits-snn/fits/internal/enum"
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
	return enum.ParseFold("mode", strings.TrimSpace(s), Modes()...)
}
