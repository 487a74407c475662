package vexcheck

import (
	"errors"
	"strings"
	"testing"
)

// KernelsProgram is the main package that links the host kernels of fits/fused and fits/events.
const KernelsProgram = "github.com/fits-snn/fits/fits/internal/vexcheck/kernels"

// maxReported is how many findings Test reports one by one.
const maxReported = 60

// Test builds program (a main package, see Build), disassembles the functions of package pkg (an import
// path) in it and fails t on every legacy-SSE instruction in a function of pkg that holds vector code,
// naming the instruction, its source line and the function. Each of kernels (function names within pkg, as
// the symbol table spells them: "(*expanded).forward8", "axpy") must be in the program and hold vector code,
// so that a renamed or vanished kernel cannot pass unchecked. It skips t only when no GNU objdump for
// x86-64 is installed.
func Test(t testing.TB, program, pkg string, kernels ...string) {
	t.Helper()
	objdump, err := Objdump()
	if errors.Is(err, ErrNoObjdump) {
		t.Skipf("%v: the check for legacy-SSE instructions in the vector code did not run", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Build(t.TempDir(), program)
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := Disassemble(objdump, bin, pkg+".")
	if err != nil {
		t.Fatal(err)
	}
	vector := map[string]bool{}
	var names []string
	for i := range funcs {
		if funcs[i].Vector() {
			name := strings.TrimPrefix(funcs[i].Name, pkg+".")
			vector[name] = true
			names = append(names, name)
		}
	}
	for _, k := range kernels {
		if !vector[k] {
			t.Errorf("%s.%s: not in %s as a function holding vector code (renamed, inlined or built without SIMD?)", pkg, k, program)
		}
	}
	findings := Check(funcs)
	for i, f := range findings {
		if i == maxReported {
			t.Errorf("... and %d more legacy-SSE instructions", len(findings)-maxReported)
			break
		}
		t.Error(f)
	}
	t.Logf("%d functions of %s hold vector code, checked instruction by instruction: %s", len(names), pkg, strings.Join(names, ", "))
}
