package nb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/interop"
	"github.com/fits-snn/fits/xla/xlatest"
)

// TestImportedExample imports the shipped released-layout run into a runs root, reads it back on a
// second call without writing, refuses a folder that holds another run, and shows notebook 13's inspector
// and notebook 08's organisation figures on it under names of their own.
func TestImportedExample(t *testing.T) {
	t.Setenv("FITS_ROOT", "..")
	root := t.TempDir()
	dir, err := ImportedExample(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(root, "imported", "released-o1") {
		t.Errorf("imported into %s", dir)
	}
	entries := func() []string {
		t.Helper()
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			st, _ := e.Info()
			names = append(names, e.Name()+" "+st.ModTime().String())
		}
		return names
	}
	first := entries()
	if again, err := ImportedExample(root); err != nil || again != dir {
		t.Fatalf("importing again: %q, %v", again, err)
	}
	if got := entries(); !slices.Equal(got, first) {
		t.Errorf("importing again rewrote the run: %v, was %v", got, first)
	}
	if err := ImportReleased(filepath.Join(ReleasedExample(), "..", "o2"), dir, interop.MapOptions{Small: true}); err == nil || !strings.Contains(err.Error(), "holds another run") {
		t.Errorf("importing another checkpoint over the run: %v", err)
	}
	if got := entries(); !slices.Equal(got, first) {
		t.Errorf("a refused import changed the run: %v, was %v", got, first)
	}

	r, err := analysis.Load(dir, analysis.Options{Backend: xlatest.XLA(t)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := InspectImported(r, 2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range out.Figures {
		names = append(names, f.Name)
	}
	want := []string{"13_imported_neuron_inspector", "13_imported_neuron_raster", "13_imported_fig2_left_target_shifts",
		"13_imported_fig2_right_delay_shifts", "13_imported_figA2_beta_lambda"}
	if !slices.Equal(names, want) {
		t.Errorf("figures %v, want %v", names, want)
	}
	if len(out.Notes) == 0 || !strings.Contains(out.Notes[0], "from `o1/best.pth`") || !strings.Contains(out.Notes[0], "after epoch 16 of the 25") {
		t.Errorf("notes %q", out.Notes)
	}
	for _, tab := range out.Tables[len(out.Tables)-3:] {
		if !strings.Contains(tab.Caption, "imported from o1/best.pth") || strings.Contains(tab.Caption, "mode") {
			t.Errorf("caption %q does not name the imported run as its source", tab.Caption)
		}
	}

	// A run trained here is not an imported one.
	r.Result.Imported = nil
	if _, err := InspectImported(r, 0); err == nil {
		t.Error("a run that was not imported was inspected as one")
	}
}
