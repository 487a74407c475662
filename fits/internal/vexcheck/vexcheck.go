// Package vexcheck finds legacy-SSE instructions in the vector code of a built x86-64 Go program.
//
// Code written with Go's SIMD package (simd/archsimd) runs AVX instructions, VEX- or EVEX-encoded, among
// which the Go compiler may still put legacy (non-VEX) SSE ones (golang/go#80835): on Intel CPUs each costs
// an AVX–SSE transition, which in a time loop takes an AVX kernel down to scalar speed (docs/performance.md,
// "AVX–SSE transitions"). This package reads the code, not the clock: the CPU that runs the tests does not
// matter.
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
	"slices"
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
	// Frames are its source positions, innermost first: the line it was compiled from (in the inlined
	// function, for inlined code), then the line of each call that inlined it, out to the function of its
	// symbol. Empty when the debug information does not cover Addr.
	Frames []Frame
}

// Frame is a source position.
type Frame struct {
	File string
	Line int
}

func (f Frame) String() string { return fmt.Sprintf("%s:%d", f.File, f.Line) }

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

// Source returns the innermost of the instruction's frames in a file of the source directory dir (the
// package's import path in a program built with -trimpath), or its innermost frame when none is; false when
// it has no frame.
func (in Instruction) Source(dir string) (Frame, bool) {
	if len(in.Frames) == 0 {
		return Frame{}, false
	}
	for _, f := range in.Frames {
		if i := strings.LastIndexByte(f.File, '/'); i >= 0 && f.File[:i] == dir {
			return f, true
		}
	}
	return in.Frames[0], true
}

// Function is a disassembled function.
type Function struct {
	Name         string
	Instructions []Instruction
}

// Vector reports whether the function holds vector code (an Instruction for which Vector is true).
func (f *Function) Vector() bool { return slices.ContainsFunc(f.Instructions, Instruction.Vector) }

// Finding is a legacy-SSE instruction in a function that holds vector code.
type Finding struct {
	Func string
	Instruction
}

// Package returns the import path of the package of the finding's function.
func (f Finding) Package() string {
	name := f.Func
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if j := strings.IndexByte(name[i:], '.'); j >= 0 {
			return name[:i+j]
		}
	}
	pkg, _, _ := strings.Cut(name, ".")
	return pkg
}

// String names the instruction and its source line in the function's package (the innermost one there),
// then its encoding, address and function, and for inlined code the chain of source lines, innermost first
// (e.g. an archsimd function's line in the kernel's line).
func (f Finding) String() string {
	src, ok := f.Source(f.Package())
	pos := fmt.Sprintf("%#x", f.Addr)
	if ok {
		pos = src.String()
	}
	msg := fmt.Sprintf("%s: %s (legacy SSE: % x at %#x, in %s", pos, f.Text, f.Bytes, f.Addr, f.Func)
	if len(f.Frames) > 1 {
		chain := make([]string, len(f.Frames))
		for i, fr := range f.Frames {
			chain[i] = fr.String()
		}
		msg += "; inlined: " + strings.Join(chain, " in ")
	}
	return msg + ")"
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
		name   string
		lo, hi uint64
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
	lines, err := readDebug(f, spans[0].lo, spans[len(spans)-1].hi)
	if err != nil {
		return nil, err
	}
	funcs := make([]Function, len(spans))
	for i, sp := range spans {
		funcs[i].Name = sp.name
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
		in.Frames = lines.frames(in.Addr)
		funcs[k].Instructions = append(funcs[k].Instructions, in)
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

// debugInfo maps addresses to source lines and inlined calls.
type debugInfo struct {
	rows    []lineRow // by address
	inlines []inlineSite
}

// lineRow is a row of the DWARF line table.
type lineRow struct {
	addr uint64
	file string
	line int
	end  bool // the end of a sequence: no line from here on
}

// inlineSite is the code of one inlined call: its address ranges, its depth in the debug information's
// tree (deeper is further inside), and the position of the call.
type inlineSite struct {
	ranges [][2]uint64
	depth  int
	call   Frame
}

// readDebug reads the DWARF line table rows of [lo, hi) (and those up to 64 KiB before lo) and the inlined
// calls of the functions that overlap [lo, hi).
func readDebug(f *elf.File, lo, hi uint64) (*debugInfo, error) {
	d, err := f.DWARF()
	if err != nil {
		return nil, fmt.Errorf("vexcheck: DWARF: %w", err)
	}
	info := &debugInfo{}
	overlaps := func(rs [][2]uint64) bool {
		return slices.ContainsFunc(rs, func(r [2]uint64) bool { return r[0] < hi && r[1] > lo })
	}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("vexcheck: DWARF: %w", err)
		}
		if cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		var files []*dwarf.LineFile
		if lr, err := d.LineReader(cu); err == nil && lr != nil {
			var le dwarf.LineEntry
			for lr.Next(&le) == nil {
				if le.Address >= hi || le.Address+1<<16 < lo {
					continue
				}
				if le.EndSequence || le.File == nil {
					info.rows = append(info.rows, lineRow{addr: le.Address, end: true})
					continue
				}
				info.rows = append(info.rows, lineRow{addr: le.Address, file: le.File.Name, line: le.Line})
			}
			files = lr.Files()
		}
		if !cu.Children {
			continue
		}
		// The unit's tree: functions outside [lo, hi) skipped, inlined calls recorded at their depth.
		for level := 1; level > 0; {
			e, err := r.Next()
			if err != nil {
				return nil, fmt.Errorf("vexcheck: DWARF: %w", err)
			}
			if e == nil {
				break
			}
			if e.Tag == 0 {
				level--
				continue
			}
			rs, _ := d.Ranges(e)
			switch e.Tag {
			case dwarf.TagSubprogram:
				if !overlaps(rs) {
					r.SkipChildren()
					continue
				}
			case dwarf.TagInlinedSubroutine:
				site := inlineSite{ranges: rs, depth: level}
				if k, ok := e.Val(dwarf.AttrCallFile).(int64); ok && k > 0 && int(k) < len(files) && files[k] != nil {
					site.call.File = files[k].Name
				}
				if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
					site.call.Line = int(l)
				}
				if site.call.File != "" && overlaps(rs) {
					info.inlines = append(info.inlines, site)
				}
			}
			if e.Children {
				level++
			}
		}
	}
	// At one address the end of a sequence comes before the start of the next.
	sort.SliceStable(info.rows, func(i, j int) bool {
		a, b := info.rows[i], info.rows[j]
		return a.addr < b.addr || a.addr == b.addr && a.end && !b.end
	})
	return info, nil
}

// frames returns the source positions of addr, innermost first (none when its line is unknown).
func (t *debugInfo) frames(addr uint64) []Frame {
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > addr }) - 1
	if i < 0 || t.rows[i].file == "" {
		return nil
	}
	out := []Frame{{t.rows[i].file, t.rows[i].line}}
	var sites []inlineSite
	for _, s := range t.inlines {
		if slices.ContainsFunc(s.ranges, func(r [2]uint64) bool { return r[0] <= addr && addr < r[1] }) {
			sites = append(sites, s)
		}
	}
	sort.SliceStable(sites, func(i, j int) bool { return sites[i].depth > sites[j].depth })
	for _, s := range sites {
		out = append(out, s.call)
	}
	return out
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
