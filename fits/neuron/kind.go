package neuron

import (
	"fmt"
	"strings"

	"github.com/fits-snn/fits/internal/enum"
	"github.com/gomlx/gomlx/support/xslices"
)

// Kind names a member of the neuron family: a cell registered with Register (see Cell). The name is what
// configurations, checkpoints, result.json and the CLI store, so a registered name never changes. The
// paper's ablation family (Section 5.2, table of the factorized ablation) is LIF, AdaptLIF, FSFrozen, FS
// and FSTS, each declared in its cell's file; Kinds lists every registered kind.
type Kind string

// Kinds returns every registered kind, ordered by the rank given to Register (the paper's ablation order:
// plain LIF first, FS + TS last).
func Kinds() []Kind { return xslices.Map(registry, func(r registration) Kind { return r.kind }) }

// KindNames returns the names of Kinds(), for help texts and error messages.
func KindNames() []string { return enum.Names(Kinds()...) }

// String returns the kind's name, e.g. "fsts".
func (k Kind) String() string { return string(k) }

// ParseKind returns the registered kind named s (case-insensitive), e.g. lif, adaptlif, fs-frozen, fs or
// fsts; the error lists the registered names.
func ParseKind(s string) (Kind, error) { return enum.ParseFold("neuron kind", s, Kinds()...) }

// MarshalText implements encoding.TextMarshaler (JSON configurations store the name). Unregistered
// kinds are an error.
func (k Kind) MarshalText() ([]byte, error) {
	if _, err := k.Cell(); err != nil {
		return nil, err
	}
	return []byte(k), nil
}

// UnmarshalText implements encoding.TextUnmarshaler: the name must be registered.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Cell returns the cell registered under k.
func (k Kind) Cell() (Cell, error) {
	for _, r := range registry {
		if r.kind == k {
			return r.cell, nil
		}
	}
	return nil, fmt.Errorf("unknown neuron kind %q (valid: %s)", string(k), strings.Join(KindNames(), ", "))
}

// Summary returns the registered cell's one-line description ("" for an unregistered kind).
func (k Kind) Summary() string {
	c, err := k.Cell()
	if err != nil {
		return ""
	}
	return c.Summary()
}

// HasAdaptation reports whether the kind's cell carries the adaptation current a (all kinds of the paper's
// family but LIF).
func (k Kind) HasAdaptation() bool {
	c, err := k.Cell()
	return err == nil && c.State(DefaultConfig(k, 0)).Adaptation
}

// HasTargetFrequency reports whether the kind is parameterized by a target frequency f* (its cell is a
// TargetFrequencyCell: FSFrozen, FS, FSTS).
func (k Kind) HasTargetFrequency() bool { return cellIs[TargetFrequencyCell](k) }

// HasTS reports whether the kind has the TS module of Eqs. 8–10 (its cell is a TSCell: FSTS).
func (k Kind) HasTS() bool { return cellIs[TSCell](k) }

// cellIs reports whether k is registered with a cell that implements T.
func cellIs[T Cell](k Kind) bool {
	c, _ := k.Cell()
	_, ok := c.(T)
	return ok
}

// CheckOrder reports whether the kind accepts the TS cascade order M = order (FSTS: M ≥ 1; kinds without
// a TS module: M = 0).
func (k Kind) CheckOrder(order int) error {
	c, err := k.Cell()
	if err != nil {
		return err
	}
	return c.CheckOrder(order)
}
