package progress

import (
	"strings"
	"testing"
)

func TestBar(t *testing.T) {
	var sb strings.Builder
	b := New(&sb, "convert", 4)
	b.Add(1)
	b.Add(3)
	b.Done()
	out := sb.String()
	if !strings.Contains(out, "convert") || !strings.Contains(out, "100%") || !strings.Contains(out, "4/4") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("bar output %q", out)
	}
	var nb *Bar
	nb.Add(1)
	nb.Done()
	New(nil, "x", 1).Done()
	sb.Reset()
	bb := NewBytes(&sb, "get", 3<<20)
	bb.Set(3 << 20)
	bb.Done()
	if !strings.Contains(sb.String(), "3.0 MiB/3.0 MiB") {
		t.Fatalf("bytes bar %q", sb.String())
	}
}
