package sweep

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
)

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  string
	}{
		{"1-5", []int64{1, 2, 3, 4, 5}, ""},
		{"3", []int64{3}, ""},
		{"1,3,7-9", []int64{1, 3, 7, 8, 9}, ""},
		{" 2 , 4-4 ", []int64{2, 4}, ""},
		{"0-1", []int64{0, 1}, ""},
		{"", nil, "empty"},
		{"5-1", nil, "range"},
		{"1,x", nil, `"x"`},
		{"1-3,2", nil, "seed 2 is listed twice"},
		{"-3", nil, "not a seed"},
		{"1-20000", nil, "more than 10000"},
	} {
		got, err := ParseSeeds(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSeeds(%q) = %v, %v; want an error mentioning %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// testTable is the table the tests sweep: the SSC ablation, whose quick stand-ins (W = 512 only) train on
// the embedded synthetic task.
const testTable = "Table 3"

// firstTable returns testTable and its experiments that have a quick recipe.
func firstTable(t *testing.T) (string, []experiment.Experiment) {
	t.Helper()
	all, err := experiment.ForTable(testTable)
	if err != nil {
		t.Fatal(err)
	}
	var exps []experiment.Experiment
	for _, e := range all {
		if e.HasQuick() {
			exps = append(exps, e)
		}
	}
	if len(exps) < 2 || len(exps) == len(all) {
		t.Fatalf("%s has %d experiments, %d with a quick recipe: the tests need some of each", testTable, len(all), len(exps))
	}
	return testTable, exps
}

func TestNewGridTable(t *testing.T) {
	label, exps := firstTable(t)
	root := t.TempDir()
	g, err := NewGrid(Spec{Table: "3", Mode: experiment.Quick, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	// The experiments of the table with a quick recipe, in order, each with its own quick seeds and the
	// recipe it trains with; the others are omitted.
	var want []Run
	for _, e := range exps {
		for _, s := range e.SeedsFor(experiment.Quick) {
			cfg, _ := e.Config(experiment.Quick, s)
			want = append(want, Run{Experiment: e.ID, Seed: s, Dir: experiment.RunDir(root, e.ID, s), Recipe: &cfg})
		}
	}
	if !reflect.DeepEqual(g.Runs, want) {
		t.Fatalf("runs\n%v\nwant\n%v", g.Runs, want)
	}
	// Extra training flags change the recipe in ways only fits train resolves: no recipe is kept.
	if g, err := NewGrid(Spec{Table: "3", Mode: experiment.Quick, Root: root, TrainArgs: []string{"--epochs=1"}}); err != nil || g.Runs[0].Recipe != nil {
		t.Errorf("with extra flags: %+v, %v", g.Runs[0], err)
	}
	all, _ := experiment.ForTable(label)
	if len(g.Omitted) != len(all)-len(exps) || slices.Contains(g.Omitted, exps[0].ID) {
		t.Errorf("omitted %v", g.Omitted)
	}
	tables, err := g.Tables()
	if err != nil || !slices.Contains(tables, label) {
		t.Errorf("Tables() = %v, %v; want it to contain %q", tables, err, label)
	}

	// Full mode: every experiment, the paper's seeds.
	g, err = NewGrid(Spec{Table: label, Mode: experiment.Full, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range all {
		n += len(e.Seeds)
	}
	if len(g.Runs) != n || len(g.Omitted) != 0 {
		t.Errorf("full mode: %d runs, omitted %v; want %d runs", len(g.Runs), g.Omitted, n)
	}

	// Explicit seeds replace each experiment's own.
	g, err = NewGrid(Spec{Table: label, Seeds: []int64{7, 9}, Mode: experiment.Quick, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Runs) != 2*len(exps) || g.Runs[0].Seed != 7 || g.Runs[1].Seed != 9 || g.Runs[1].Experiment != exps[0].ID {
		t.Errorf("runs with --seeds=7,9: %v", g.Runs)
	}
}

func TestNewGridExperimentsAndCommand(t *testing.T) {
	_, exps := firstTable(t)
	e := exps[len(exps)-1]
	// A relative root is made absolute.
	t.Chdir(t.TempDir())
	g, err := NewGrid(Spec{Experiments: []string{e.ID}, Seeds: []int64{3}, Mode: experiment.Full, Root: "sweeps/a",
		TrainArgs: []string{"--epochs=1", "--quiet"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Runs) != 1 || !filepath.IsAbs(g.Root) || !strings.HasSuffix(g.Root, filepath.Join("sweeps", "a")) {
		t.Fatalf("grid %+v", g)
	}
	r := g.Runs[0]
	want := []string{"train", "--experiment=" + e.ID, "--mode=full", "--seed=3", "--out=" + experiment.RunDir(g.Root, e.ID, 3),
		"--epochs=1", "--quiet"}
	if got := g.Command(r, false); !slices.Equal(got, want) {
		t.Errorf("Command = %q\nwant %q", got, want)
	}
	if got := g.Command(r, true); !slices.Equal(got, append(want, "--resume")) {
		t.Errorf("Command with resume = %q", got)
	}
}

func TestNewGridErrors(t *testing.T) {
	label, exps := firstTable(t)
	id := exps[0].ID
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"neither", Spec{Mode: experiment.Quick, Root: root}, "either a table or a list"},
		{"both", Spec{Table: label, Experiments: []string{id}, Mode: experiment.Quick, Root: root}, "either a table or a list"},
		{"no root", Spec{Table: label, Mode: experiment.Quick}, "root"},
		{"unknown table", Spec{Table: "no such table", Mode: experiment.Quick, Root: root}, "no such table"},
		{"unknown experiment", Spec{Experiments: []string{"no/such"}, Mode: experiment.Quick, Root: root}, "no/such"},
		{"duplicate", Spec{Experiments: []string{id, id}, Mode: experiment.Quick, Root: root}, "twice"},
		{"bad mode", Spec{Table: label, Mode: "slow", Root: root}, "slow"},
		{"no quick recipe", Spec{Experiments: []string{noQuick(t)}, Mode: experiment.Quick, Root: root}, "quick"},
		{"reserved flag", Spec{Table: label, Mode: experiment.Quick, Root: root, TrainArgs: []string{"--seed=3"}}, "--seed"},
		{"reserved flag, one dash", Spec{Table: label, Mode: experiment.Quick, Root: root, TrainArgs: []string{"-out=x"}}, "--out"},
		{"resume", Spec{Table: label, Mode: experiment.Quick, Root: root, TrainArgs: []string{"--resume"}}, "--resume"},
		{"not a flag", Spec{Table: label, Mode: experiment.Quick, Root: root, TrainArgs: []string{"epochs=1"}}, "not a flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGrid(tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewGrid = %v, %v; want an error mentioning %q", g, err, tc.want)
			}
		})
	}
}

// noQuick returns an experiment of testTable without a quick recipe.
func noQuick(t *testing.T) string {
	all, _ := experiment.ForTable(testTable)
	for _, e := range all {
		if !e.HasQuick() {
			return e.ID
		}
	}
	t.Fatal("no experiment without a quick recipe")
	return ""
}

func ExampleParseSeeds() {
	seeds, _ := ParseSeeds("1-3,7")
	fmt.Println(seeds)
	// Output: [1 2 3 7]
}
