package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListFlagFromFile: --name=@FILE reads a list flag's values from a file (commas, spaces or line
// breaks between them) and gives the same result as the values on the command line; lists far beyond a
// command line's length work.
func TestListFlagFromFile(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "fstar.txt")
	if err := os.WriteFile(short, []byte("1, 5\n10\n\n20 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ := run("theory", "--json", "--fstar=1,5,10,20,50")
	status, got, stderr := run("theory", "--json", "--fstar=@"+short)
	if status != 0 || got != want {
		t.Errorf("--fstar=@file: status %d, stderr %q; output differs from the command-line list", status, stderr)
	}

	const n = 20000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%v\n", math.Pi*float64(i+1)/n)
	}
	long := filepath.Join(dir, "omega.txt")
	if err := os.WriteFile(long, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := run("response", "--json", "--omega=@"+long)
	if status != 0 {
		t.Fatalf("--omega=@file: status %d: %s", status, stderr)
	}
	var out struct {
		Omega []float64 `json:"omega"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Omega) != n || out.Omega[n-1] != math.Pi {
		t.Errorf("%d frequencies, last %v; want %d ending at pi", len(out.Omega), out.Omega[len(out.Omega)-1], n)
	}
}
