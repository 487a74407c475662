package events_test

import (
	"flag"
	"testing"

	"github.com/fits-snn/fits/fits/internal/lanegen"
)

var update = flag.Bool("update", false, "TestRows16Generated: rewrite rows16_amd64.go from rows8_amd64.go")

// rows16 says how rows8_amd64.go becomes rows16_amd64.go.
var rows16 = lanegen.Rules{
	Source: "rows8_amd64.go",
	Target: "rows16_amd64.go",
	Test:   "TestRows16Generated",
	Doc8:   "// The AVX2 row kernels",
	Doc16: `// The AVX-512 row kernels: 16 outputs per instruction, generated from rows8_amd64.go (the same code with
// 16 lanes). The rules of vector_amd64.go hold: no legacy-SSE instruction (TestNoLegacySSE), VZEROUPPER at
// the end, never inlined.
`,
	Idents: []string{"forwardRow", "gradRow", "loadPart"},
}

// TestRows16Generated holds rows16_amd64.go to what rows8_amd64.go generates; with -update it writes the
// file.
func TestRows16Generated(t *testing.T) { lanegen.Check(t, rows16, *update) }
