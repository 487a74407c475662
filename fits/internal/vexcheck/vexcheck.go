// Package vexcheck finds legacy-SSE instructions in the vector code of a built x86-64 Go program.
//
// Code written with Go's SIMD package (simd/archsimd) runs AVX instructions, VEX- or EVEX-encoded. The Go
// compiler may still put legacy (non-VEX) SSE instructions among them: a scalar broadcast's MOVSS, an XORPS
// to zero a register, MOVUPS to zero or copy vector locals in memory, a scalar float conversion (Go issue
// golang/go#80835). On Intel CPUs every legacy-SSE instruction that runs while the upper halves of the
// vector registers hold AVX data costs a state transition or a merge with the upper halves, and inside a
// time loop that takes an AVX kernel down to scalar speed; AMD CPUs do not pay it. Which CPU runs the tests
// does not matter here: this package reads the code, not the clock.
//
// It builds a program for linux/amd64 with GOEXPERIMENT=simd (Build), disassembles it with GNU objdump,
// which decodes VEX and EVEX (Go's own objdump does not), maps every instruction to its source line with the
// program's DWARF line table (inlined code maps to the inlined function's line), and reports, in every
// function of a package that holds vector code, each instruction that touches an XMM, YMM or ZMM register
// without a VEX or EVEX encoding (Check).
package vexcheck

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ErrNoObjdump says that no GNU objdump that decodes x86-64 was found.
var ErrNoObjdump = errors.New("vexcheck: no GNU objdump for x86-64 (Debian package binutils, or binutils-x86-64-linux-gnu on other architectures)")

// Objdump returns the path of a GNU objdump that decodes x86-64 code: x86_64-linux-gnu-objdump where it
// exists, objdump otherwise. It returns ErrNoObjdump when neither is installed or the one found does not
// know x86-64 (binutils built for another architecture only).
func Objdump() (string, error) {
	for _, name := range []string{"x86_64-linux-gnu-objdump", "objdump"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "--info").Output()
		if err == nil && bytes.Contains(out, []byte("elf64-x86-64")) {
			return path, nil
		}
	}
	return "", ErrNoObjdump
}

// Build builds the main package pkg (an import path or a directory, as the go command takes it) for
// linux/amd64 with GOEXPERIMENT=simd and -trimpath (source files named by import path), cgo off, into dir,
// and returns the program's path. It runs the go command found on PATH or in $GOROOT/bin, in the current
// directory.
func Build(dir, pkg string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goCmd = filepath.Join(root, "bin", "go")
		}
		if _, statErr := os.Stat(goCmd); goCmd == "" || statErr != nil {
			return "", fmt.Errorf("vexcheck: the go command is not on PATH: %w", err)
		}
	}
	out := filepath.Join(dir, "kernels")
	cmd := exec.Command(goCmd, "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "GOEXPERIMENT=simd", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("vexcheck: go build %s: %v\n%s", pkg, err, msg)
	}
	return out, nil
}

// Instruction is one machine instruction of a disassembled function.
type Instruction struct {
	// Addr is its address; Bytes its encoding; Text its mnemonic and operands as objdump prints them (AT&T
	// syntax).
	Addr  uint64
	Bytes []byte
	Text  string
	// File and Line are its source position (the inlined function's for inlined code); File is empty when
	// the line table does not cover Addr.
	File string
	Line int
}

var vectorReg = regexp.MustCompile(`%[xyz]mm[0-9]+\b`)

// TouchesVectorRegister reports whether the instruction names an XMM, YMM or ZMM register.
func (in Instruction) TouchesVectorRegister() bool { return vectorReg.MatchString(in.Text) }

// Encoded reports whether the instruction has a VEX (C4, C5) or EVEX (62) encoding, after any legacy
// prefixes. In 64-bit mode these bytes always start a VEX or EVEX instruction.
func (in Instruction) Encoded() bool {
	for _, b := range in.Bytes {
		switch {
		case b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67 ||
			b == 0xf0 || b == 0xf2 || b == 0xf3 || b&0xf0 == 0x40:
			continue // a legacy or REX prefix
		case b == 0xc4 || b == 0xc5 || b == 0x62:
			return true
		default:
			return false
		}
	}
	return false
}

// Legacy reports whether the instruction is legacy SSE: it touches an XMM, YMM or ZMM register without a
// VEX or EVEX encoding.
func (in Instruction) Legacy() bool { return in.TouchesVectorRegister() && !in.Encoded() }

// Vector reports whether the instruction is vector code: VEX- or EVEX-encoded and touching a vector register,
// or VZEROUPPER / VZEROALL.
func (in Instruction) Vector() bool {
	if !in.Encoded() {
		return false
	}
	op, _, _ := strings.Cut(in.Text, " ")
	return in.TouchesVectorRegister() || op == "vzeroupper" || op == "vzeroall"
}

// Position returns "file:line", or the address when the line is unknown.
func (in Instruction) Position() string {
	if in.File == "" {
		return fmt.Sprintf("%#x", in.Addr)
	}
	return fmt.Sprintf("%s:%d", in.File, in.Line)
}

// Function is a disassembled function.
type Function struct {
	Name         string
	Instructions []Instruction
}

// Vector reports whether the function holds vector code (an Instruction for which Vector is true).
func (f *Function) Vector() bool {
	for _, in := range f.Instructions {
		if in.Vector() {
			return true
		}
	}
	return false
}

// Finding is a legacy-SSE instruction in a function that holds vector code.
type Finding struct {
	Func string
	Instruction
}

// String names the instruction, its source line, its encoding and address, and the function.
func (f Finding) String() string {
	return fmt.Sprintf("%s: %s (legacy SSE: % x at %#x, in %s)", f.Position(), f.Text, f.Bytes, f.Addr, f.Func)
}

// Disassemble returns the functions of program (an x86-64 ELF file with a symbol table and DWARF line
// information) whose symbol names start with prefix, in address order, disassembled with objdump.
func Disassemble(objdump, program, prefix string) ([]Function, error) {
	f, err := elf.Open(program)
	if err != nil {
		return nil, fmt.Errorf("vexcheck: %w", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("vexcheck: %s is not an x86-64 program (%v)", program, f.Machine)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("vexcheck: symbols of %s: %w", program, err)
	}
	type span struct {
		name     string
		lo, hi   uint64
		function *Function
	}
	var spans []span
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && strings.HasPrefix(s.Name, prefix) {
			spans = append(spans, span{name: s.Name, lo: s.Value, hi: s.Value + s.Size})
		}
	}
	if len(spans) == 0 {
		return nil, nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	lines, err := readLines(f, spans[0].lo, spans[len(spans)-1].hi)
	if err != nil {
		return nil, err
	}
	funcs := make([]Function, len(spans))
	for i := range spans {
		funcs[i].Name = spans[i].name
		spans[i].function = &funcs[i]
	}
	// One objdump run over the range that holds the functions; instructions outside them are dropped.
	cmd := exec.Command(objdump, "-d", "-w", "--insn-width=16",
		"--start-address="+strconv.FormatUint(spans[0].lo, 10), "--stop-address="+strconv.FormatUint(spans[len(spans)-1].hi, 10), program)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("vexcheck: %s: %v: %s", objdump, err, bytes.TrimSpace(stderr.Bytes()))
	}
	k := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		in, ok := parseLine(sc.Text())
		if !ok {
			continue
		}
		for k < len(spans) && in.Addr >= spans[k].hi {
			k++
		}
		if k == len(spans) {
			break
		}
		if in.Addr < spans[k].lo {
			continue
		}
		in.File, in.Line = lines.at(in.Addr)
		spans[k].function.Instructions = append(spans[k].function.Instructions, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vexcheck: reading objdump's output: %w", err)
	}
	return funcs, nil
}

// parseLine parses one instruction line of objdump -d -w: "  addr:\tbytes\tmnemonic operands".
func parseLine(line string) (Instruction, bool) {
	fields := strings.SplitN(line, "\t", 3)
	if len(fields) != 3 {
		return Instruction{}, false
	}
	addr, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(fields[0]), ":"), 16, 64)
	if err != nil {
		return Instruction{}, false
	}
	code, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(fields[1]), " ", ""))
	if err != nil || len(code) == 0 {
		return Instruction{}, false
	}
	text := strings.Join(strings.Fields(fields[2]), " ")
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i] // objdump's comment (a RIP-relative target)
	}
	return Instruction{Addr: addr, Bytes: code, Text: text}, true
}

// lineTable maps addresses to source lines.
type lineTable struct {
	addr []uint64
	file []string
	line []int
}

// readLines reads the DWARF line table rows of [lo, hi) (and the row before lo).
func readLines(f *elf.File, lo, hi uint64) (*lineTable, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("vexcheck: DWARF line table: %w", err)
	}
	type row struct {
		addr uint64
		file string
		line int
		end  bool // the end of a sequence: no line from here on
	}
	var rows []row
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("vexcheck: DWARF: %w", err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		r.SkipChildren()
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for lr.Next(&le) == nil {
			if le.Address >= hi || le.Address+1<<16 < lo {
				continue
			}
			if le.EndSequence || le.File == nil {
				rows = append(rows, row{addr: le.Address, end: true})
				continue
			}
			rows = append(rows, row{addr: le.Address, file: le.File.Name, line: le.Line})
		}
	}
	// At one address the end of a sequence comes before the start of the next.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].addr != rows[j].addr {
			return rows[i].addr < rows[j].addr
		}
		return rows[i].end && !rows[j].end
	})
	t := &lineTable{}
	for _, r := range rows {
		t.addr, t.file, t.line = append(t.addr, r.addr), append(t.file, r.file), append(t.line, r.line)
	}
	return t, nil
}

// at returns the source line of addr ("", 0 when unknown).
func (t *lineTable) at(addr uint64) (string, int) {
	i := sort.Search(len(t.addr), func(i int) bool { return t.addr[i] > addr }) - 1
	if i < 0 {
		return "", 0
	}
	return t.file[i], t.line[i]
}

// Check returns the legacy-SSE instructions of every function among funcs that holds vector code.
func Check(funcs []Function) []Finding {
	var out []Finding
	for i := range funcs {
		if !funcs[i].Vector() {
			continue
		}
		for _, in := range funcs[i].Instructions {
			if in.Legacy() {
				out = append(out, Finding{Func: funcs[i].Name, Instruction: in})
			}
		}
	}
	return out
}
