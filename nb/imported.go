package nb

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/interop"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/owned"
)

// Runs of the authors' released PyTorch code in the notebooks (docs/interop.md): notebook 13 imports the
// released-layout run that the repository ships (what `fits import` does, package fits/interop) and shows
// its neuron inspector and notebook 08's organisation figures on it.

// ReleasedExample returns the run folder of the released code that the repository ships as a test
// fixture (RepoRoot()/fits/interop/testdata/released/o1): best.pth, config.json and metrics.json of an FS +
// TS network (M = 1, two hidden layers of 16 neurons) that the PyTorch peer of peers/ trained with the
// released semantics on the reduced synthetic task (fits train --small).
func ReleasedExample() string {
	return filepath.Join(RepoRoot(), "fits", "interop", "testdata", "released", "o1")
}

// ImportReleased imports the released run from (its folder, or its .pth file with config.json beside it)
// into the run folder dir, as `fits import --from=FROM --out=DIR` does, unless dir holds that import
// already (result.json's imported SHA-256 is the checkpoint's): a notebook cell run again reads the run it
// imported before. A dir that holds any other run is an error and is left as it is; a refused import writes
// nothing.
func ImportReleased(from, dir string, opts interop.MapOptions) error {
	rel, err := interop.ReadReleased(from, "")
	if err != nil {
		return err
	}
	if train.HoldsRun(dir) {
		res, err := train.ReadResult(dir)
		if err == nil && res.Imported != nil && res.Imported.SHA256 == rel.SHA256 {
			return nil
		}
		return fmt.Errorf("%s holds another run than the import of %s (move it away)", dir, from)
	}
	mapped, err := interop.MapReleased(rel, opts)
	if err != nil {
		return err
	}
	staging, err := owned.Stage(dir)
	if err != nil {
		return err
	}
	if _, err := interop.ImportRun(rel, mapped, staging); err != nil {
		owned.Discard(staging)
		return err
	}
	_, err = owned.Publish(staging, dir)
	return err
}

// ImportedExample imports ReleasedExample() into root/imported/released-o1 (ImportReleased, on the reduced
// synthetic task) and returns that run folder.
func ImportedExample(root string) (string, error) {
	dir := filepath.Join(root, "imported", "released-o1")
	if err := ImportReleased(ReleasedExample(), dir, interop.MapOptions{Small: true}); err != nil {
		return "", err
	}
	return dir, nil
}

// importedPrefix starts the names of the figures of an imported run, so that they never replace the
// figures of notebooks 08 and 13 on the notebooks' own runs.
const importedPrefix = "13_imported_"

// InspectImported is what notebook 13 shows of run r, imported from another program (`fits import`): a
// line naming where it came from, the hidden layers at a glance (InspectLayers), the neuron whose f* moved
// furthest in the last hidden layer with its spikes on the first `examples` test examples
// (InspectMostShifted), and notebook 08's organisation figures of the run alone — Figure 2's Δf* and Δτ per
// layer, and with TS Figure A.2's β and λ. The figures are named 13_imported_… (figure
// 13_imported_neuron_inspector, 13_imported_fig2_left_target_shifts, …). An error wrapping ErrNoRuns when
// r is nil; an error when r was not imported.
func InspectImported(r *analysis.Run, examples int) (*Output, error) {
	if r == nil {
		return nil, fmt.Errorf("the imported run: %w", ErrNoRuns)
	}
	if r.Result == nil || r.Result.Imported == nil {
		return nil, fmt.Errorf("run %s was not imported (its result.json has no imported field)", r.Dir)
	}
	imp := r.Result.Imported
	out, err := InspectLayers(r)
	if err != nil {
		return nil, err
	}
	out.Notes = append([]string{fmt.Sprintf("Imported (%s) from `%s` (SHA-256 %s…), configuration from %s: the weights saved after epoch %d of the %d the released history records.",
		imp.Format, imp.From, imp.SHA256[:12], imp.Config, imp.Epoch, len(r.Result.Epochs))}, out.Notes...)
	neuron, err := InspectMostShifted(r, examples)
	if err != nil {
		return nil, err
	}
	out.append(neuron)
	source := fmt.Sprintf("the released code's run, imported from %s", imp.From)
	runs := []*analysis.Run{r}
	parts := []func([]*analysis.Run, string) (*Output, error){figure2LeftOfRuns, figure2RightOfRuns}
	if r.Config.Order() > 0 {
		parts = append(parts, figureA2OfRuns)
	}
	for _, part := range parts {
		o, err := part(runs, source)
		if err != nil {
			return nil, err
		}
		out.append(o)
	}
	for _, f := range out.Figures {
		f.Name = importedPrefix + strings.TrimPrefix(strings.TrimPrefix(f.Name, "08_"), "13_")
	}
	return out, nil
}

// append adds the tables, figures and notes of o to out.
func (out *Output) append(o *Output) {
	out.Tables = append(out.Tables, o.Tables...)
	out.Figures = append(out.Figures, o.Figures...)
	out.Notes = append(out.Notes, o.Notes...)
}
