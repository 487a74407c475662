package neuron

import (
	"fmt"
	"strings"
)

// Kind selects a member of the neuron family of the paper's ablation (Section 5.2, table of the
// factorized ablation).
type Kind int

const (
	// LIF is the plain leaky integrate-and-fire neuron (Eq. 1, η = 0): V0[k+1] = (1 − μΔt)V[k] + I[k].
	// No neuron parameter is learned.
	LIF Kind = iota
	// AdaptLIF is the paper's "Adapt. LIF (frozen zero init.)" baseline: the FS update of Eq. 6 with the
	// adaptation current computed, and η and γ (1/s) as trainable variables initialized at zero. Zero
	// is a stationary point: with γ = 0 the adaptation current a stays 0, so ∂L/∂η = 0, and with η = 0
	// nothing depends on a, so ∂L/∂γ = 0. Gradient-based training therefore leaves both at zero (the
	// adaptation is frozen at its zero initialization) and the spikes equal LIF's, at the computational
	// cost of the adaptive neuron.
	AdaptLIF
	// FSFrozen is the FS module with target frequencies initialized on a log scale and frozen: the
	// variable Ω* exists but is not trainable.
	FSFrozen
	// FS is the FS module with learnable target frequency Ω* (Theorem 1, Eq. 5).
	FS
	// FSTS is FS followed by the TS module of order M ≥ 1 (Eqs. 8–10), with learnable Ω*, β̂ and λ̂.
	FSTS
)

var kindNames = [...]string{LIF: "lif", AdaptLIF: "adaptlif", FSFrozen: "fs-frozen", FS: "fs", FSTS: "fsts"}

// Kinds returns all kinds in order.
func Kinds() []Kind { return []Kind{LIF, AdaptLIF, FSFrozen, FS, FSTS} }

// String returns the kind's name: lif, adaptlif, fs-frozen, fs or fsts.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// ParseKind returns the kind named s (case-insensitive): lif, adaptlif, fs-frozen, fs or fsts.
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if strings.EqualFold(s, n) {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown neuron kind %q (valid: %s)", s, strings.Join(kindNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler (JSON configurations store the name).
func (k Kind) MarshalText() ([]byte, error) {
	if k < 0 || int(k) >= len(kindNames) {
		return nil, fmt.Errorf("invalid neuron kind %d", int(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// HasAdaptation reports whether the kind carries the adaptation current a (all but LIF).
func (k Kind) HasAdaptation() bool { return k != LIF }

// HasTargetFrequency reports whether the kind is parameterized by a target frequency (FSFrozen, FS,
// FSTS).
func (k Kind) HasTargetFrequency() bool { return k == FSFrozen || k == FS || k == FSTS }
