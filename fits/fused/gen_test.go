package fused_test

import (
	"flag"
	"testing"

	"github.com/fits-snn/fits/fits/internal/lanegen"
)

var update = flag.Bool("update", false, "TestKernel16Generated: rewrite kernel16_amd64.go from kernel8_amd64.go")

// kernel16 says how kernel8_amd64.go becomes kernel16_amd64.go.
var kernel16 = lanegen.Rules{
	Source: "kernel8_amd64.go",
	Target: "kernel16_amd64.go",
	Test:   "TestKernel16Generated",
	Doc8:   "// The AVX2 kernels",
	Doc16: `// The AVX-512 kernels: groups of lanes16 = 16 neurons, all groups step by step, generated from
// kernel8_amd64.go (the same code with 16 lanes). The rules of vector_amd64.go hold: no struct zeroing or
// copying of vector data, no scalar float operation, nothing but VEX or EVEX code (TestNoLegacySSE).
`,
	// The identifiers of kernel8_amd64.go that end in 8.
	Idents: []string{"vec", "uvec", "load", "consts", "coefs", "state", "adjoint", "temps", "work", "grow", "step",
		"stepMask", "fmix", "counters", "forward", "backward", "setConsts", "loadCoefs", "reset"},
}

// TestKernel16Generated holds kernel16_amd64.go to what kernel8_amd64.go generates; with -update it writes
// the file.
func TestKernel16Generated(t *testing.T) { lanegen.Check(t, kernel16, *update) }
