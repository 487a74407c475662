package vexcheck

import (
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestClassify checks the encoding and operand rules on instructions as objdump prints them.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		code, text     string
		legacy, vector bool
	}{
		{"c5fdefc0", "vpxor %ymm0,%ymm0,%ymm0", false, true},
		{"c4e27d18c0", "vbroadcastss %xmm0,%ymm0", false, true},
		{"62f17c4858c1", "vaddps %zmm1,%zmm0,%zmm0", false, true},
		{"c5f877", "vzeroupper", false, true},
		{"67c5fe6f00", "vmovdqu (%eax),%ymm0", false, true},
		{"440f1138", "movups %xmm15,(%rax)", true, false},
		{"f30f100c88", "movss (%rax,%rcx,4),%xmm1", true, false},
		{"0f57c0", "xorps %xmm0,%xmm0", true, false},
		{"660fefc0", "pxor %xmm0,%xmm0", true, false},
		{"f3480f2cd8", "cvttss2si %xmm0,%rbx", true, false},
		{"4889c3", "mov %rax,%rbx", false, false},
		{"c4e2f8f2c1", "andn %rcx,%rax,%rax", false, false}, // VEX, but no vector register
	} {
		code, err := hex.DecodeString(tc.code)
		if err != nil {
			t.Fatal(err)
		}
		in := Instruction{Bytes: code, Text: tc.text}
		if in.Legacy() != tc.legacy || in.Vector() != tc.vector {
			t.Errorf("%s (% x): legacy %v, vector %v; want %v, %v", tc.text, code, in.Legacy(), in.Vector(), tc.legacy, tc.vector)
		}
	}
}

// TestParseLine reads objdump -d -w lines: instructions with their address, bytes and text (without
// objdump's comment), and nothing from the other lines.
func TestParseLine(t *testing.T) {
	in, ok := parseLine("  4a7431:\t45 0f 11 38          \tmovups %xmm15,(%r8)")
	if !ok || in.Addr != 0x4a7431 || hex.EncodeToString(in.Bytes) != "450f1138" || in.Text != "movups %xmm15,(%r8)" {
		t.Errorf("got %+v, %v", in, ok)
	}
	in, ok = parseLine("  614b60:\tc5 fa 10 05 90 40 75 00 \tvmovss 0x754090(%rip),%xmm0        # d68bf8 <$f32.3f800000>")
	if !ok || in.Text != "vmovss 0x754090(%rip),%xmm0" {
		t.Errorf("got %+v, %v", in, ok)
	}
	for _, line := range []string{"", "0000000000614e80 <main.f>:", "Disassembly of section .text:", "fused.test:     file format elf64-x86-64"} {
		if _, ok := parseLine(line); ok {
			t.Errorf("%q parsed as an instruction", line)
		}
	}
}

// TestFindsLegacySSE builds testdata/bad and checks that Check reports the scalar multiply of its function
// mixed, at its source line, and nothing in its function clean.
func TestFindsLegacySSE(t *testing.T) {
	objdump, err := Objdump()
	if errors.Is(err, ErrNoObjdump) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/bad/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var line, inlined, callee int
	for i, l := range strings.Split(string(src), "\n") {
		switch {
		case strings.Contains(l, "// legacy SSE here"):
			line = i + 1
		case strings.Contains(l, "// legacy SSE inlined here"):
			inlined = i + 1
		case strings.Contains(l, "// legacy SSE in product"):
			callee = i + 1
		}
	}
	bin, err := Build(t.TempDir(), "./testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := Disassemble(objdump, bin, "main.")
	if err != nil {
		t.Fatal(err)
	}
	vector := map[string]bool{}
	for i := range funcs {
		vector[funcs[i].Name] = funcs[i].Vector()
	}
	if !vector["main.mixed"] || !vector["main.clean"] {
		t.Fatalf("main.mixed and main.clean must hold vector code: %v", vector)
	}
	found, foundInlined := false, false
	for _, f := range Check(funcs) {
		t.Log(f)
		if f.Func == "main.clean" {
			t.Errorf("a finding in main.clean: %v", f)
		}
		if f.Func != "main.mixed" || !strings.HasSuffix(f.Frames[0].File, "testdata/bad/main.go") {
			continue
		}
		switch {
		case f.Frames[0].Line == line && len(f.Frames) == 1:
			found = true
		case f.Frames[0].Line == callee && len(f.Frames) == 2 && f.Frames[1].Line == inlined:
			foundInlined = true
		}
	}
	if !found {
		t.Errorf("no legacy-SSE instruction reported at testdata/bad/main.go:%d", line)
	}
	if !foundInlined {
		t.Errorf("no legacy-SSE instruction reported at testdata/bad/main.go:%d, inlined at line %d", callee, inlined)
	}
}
