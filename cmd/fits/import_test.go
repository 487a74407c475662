package main

import (
	"archive/zip"
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// releasedFixtures are the PyTorch peer's run folders in the released layout (fits/interop's testdata).
const releasedFixtures = "../../fits/interop/testdata/released"

// writeZip writes a zip archive of the given records.
func writeZip(t *testing.T, file string, records map[string][]byte) {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, content := range records {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(content)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportRefusesBadCheckpoints runs fits import on corrupt, truncated and foreign files and on
// checkpoints that do not describe a network of this toolkit: each exits with status 2, one line on
// stderr naming the problem, and writes nothing.
func TestImportRefusesBadCheckpoints(t *testing.T) {
	tmp := t.TempDir()
	good, err := os.ReadFile(filepath.Join(releasedFixtures, "o0", "best.pth"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, b []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := func(name string) string { return filepath.Join(releasedFixtures, "bad", name) }
	foreignZip := filepath.Join(tmp, "foreign.zip")
	writeZip(t, foreignZip, map[string][]byte{"readme.txt": []byte("not a checkpoint")})
	evilPickle := filepath.Join(tmp, "evil.pth")
	// GLOBAL 'os system', then a call: a pickle that would run a command if it were trusted.
	writeZip(t, evilPickle, map[string][]byte{"a/data.pkl": []byte("\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.")})
	lost := filepath.Join(tmp, "lost.pth")
	{ // the fixture's archive without its first storage record
		zr, err := zip.NewReader(bytes.NewReader(good), int64(len(good)))
		if err != nil {
			t.Fatal(err)
		}
		recs := map[string][]byte{}
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, "/data/0") {
				continue
			}
			r, _ := f.Open()
			var b bytes.Buffer
			b.ReadFrom(r)
			recs[f.Name] = b.Bytes()
		}
		writeZip(t, lost, recs)
	}
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"missing", []string{"--from=" + filepath.Join(tmp, "nope.pth")}, "no such file"},
		{"corrupt", []string{"--from=" + put("corrupt.pth", bytes.Repeat([]byte{0x5a}, 4096))}, "not a PyTorch checkpoint"},
		{"truncated", []string{"--from=" + put("truncated.pth", good[:len(good)/2])}, "not a PyTorch checkpoint"},
		{"foreign zip", []string{"--from=" + foreignZip}, "without data.pkl"},
		{"foreign class", []string{"--from=" + evilPickle}, "os.system"},
		{"storage record missing", []string{"--from=" + lost}, "no record data/0"},
		{"pickle of a list", []string{"--from=" + bad("list.pth")}, "pickled list"},
		{"pickle of a module", []string{"--from=" + bad("module.pth")}, "torch.nn.modules.linear.Linear"},
		{"missing tensor", []string{"--from=" + bad("missing_tensor.pth"), "--small"}, "no tensor output.bias"},
		{"extra tensor", []string{"--from=" + bad("extra_tensor.pth"), "--small"}, "neuron_layers.0.ap_beta_raw"},
		{"wrong shape", []string{"--from=" + bad("wrong_shape.pth"), "--small"}, "neuron_layers.1.f_raw has shape [17]"},
		{"unknown config key", []string{"--from=" + bad("unknown_key.pth"), "--small"}, `"ts_mix" is not one the released code writes`},
		{"config flag with an embedded config", []string{"--from=" + filepath.Join(releasedFixtures, "o0"), "--config=" + filepath.Join(releasedFixtures, "o0", "config.json")}, "stores its own configuration"},
		{"unknown dataset", []string{"--from=" + filepath.Join(releasedFixtures, "o0"), "--dataset=nope"}, `dataset "nope"`},
		{"no --from", nil, "--from is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(tmp, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			args := append([]string{"import", "--out=" + out}, c.args...)
			var stdout, stderr bytes.Buffer
			status := runMain(args, &stdout, &stderr)
			msg := stderr.String()
			if status != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.msg) {
				t.Errorf("fits %s: status %d, stderr %q; want 2 and one line containing %q", strings.Join(args, " "), status, msg, c.msg)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("a refused import left %s behind", out)
			}
		})
	}
}

// TestImportWritesARunFolder imports a fixture through the CLI and refuses to import into it again.
func TestImportWritesARunFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"import", "--from=" + filepath.Join(releasedFixtures, "o2"), "--out=" + out, "--small"}
	var stdout, stderr bytes.Buffer
	if status := runMain(args, &stdout, &stderr); status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	if !strings.Contains(stdout.String(), "fsts on synthetic, M=2, width 16") {
		t.Errorf("stdout %q", stdout.String())
	}
	for _, f := range []string{"result.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	stderr.Reset()
	if status := runMain(args, &stdout, &stderr); status != 2 || !strings.Contains(stderr.String(), "already holds a run") {
		t.Errorf("a second import into %s: status %d, %q", out, status, stderr.String())
	}
}

// TestImportedRunIsNotResumed checks that `fits train --resume` refuses an imported run, which holds no
// optimizer state, with exit status 2 and one line, and leaves its folder as it was.
func TestImportedRunIsNotResumed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	if status := runMain([]string{"import", "--from=" + filepath.Join(releasedFixtures, "o1"), "--out=" + out, "--small"}, &stdout, &stderr); status != 0 {
		t.Fatalf("import: status %d: %s", status, stderr.String())
	}
	before := folderContent(t, out)
	stderr.Reset()
	status := runMain([]string{"train", "--resume", "--out=" + out}, &stdout, &stderr)
	msg := stderr.String()
	if status != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "was imported from o1/best.pth") || !strings.Contains(msg, "not resumed") {
		t.Errorf("fits train --resume of an imported run: status %d, stderr %q; want 2 and one line saying it is not resumed", status, msg)
	}
	if after := folderContent(t, out); !maps.Equal(before, after) {
		t.Errorf("the refused resume changed the run folder: %v, was %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
}

// folderContent returns the content of every file of dir by name.
func folderContent(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}
