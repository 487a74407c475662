package experiment

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/train"
)

func TestDifferencesAreComplete(t *testing.T) {
	ds := Differences()
	variants := map[string]Variant{}
	for _, v := range Variants() {
		variants[v.Name] = v
	}
	measured := map[string]bool{}
	options := ""
	for _, d := range ds {
		for name, v := range map[string]string{"aspect": d.Aspect, "paper": d.Paper, "paper form": d.PaperForm,
			"released": d.Released, "released file": d.ReleasedFile, "default": d.Default, "why": d.Why} {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%q: empty %s", d.Aspect, name)
			}
		}
		for _, f := range strings.Split(d.ReleasedFile, ",") {
			f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "@6c016f1"))
			if !strings.HasSuffix(f, ".py") && !strings.HasSuffix(f, ".yaml") && !strings.HasSuffix(f, ".sh") {
				t.Errorf("%q: released file %q is not a file of the released repository", d.Aspect, f)
			}
		}
		if d.Variant != "" {
			v, ok := variants[d.Variant]
			if !ok {
				t.Errorf("%q names the unknown variant %q", d.Aspect, d.Variant)
			}
			measured[d.Variant] = true
			// The variant's flags are the option that gives the paper's form.
			for _, f := range flagsOf(v.Flags) {
				if !strings.Contains(d.Option, f) {
					t.Errorf("%q is measured by %s, whose flag %s is not in its option %q", d.Aspect, v.Name, f, d.Option)
				}
			}
		}
		options += " " + d.Option
	}
	// Every flag of every variant appears in an option of the differences, and every variant that flips
	// one option measures a difference.
	for _, v := range Variants() {
		for _, f := range flagsOf(v.Flags) {
			if !strings.Contains(options, f) {
				t.Errorf("variant %s: flag %s appears in no difference's option", v.Name, f)
			}
		}
		if v.Name != VariantBaseline && v.Name != VariantFirstForms && !measured[v.Name] {
			t.Errorf("variant %s measures no difference", v.Name)
		}
	}
	// The aspects the study must cover.
	var all strings.Builder
	for _, d := range ds {
		all.WriteString(strings.ToLower(d.Aspect) + "\n")
	}
	for _, want := range []string{"λ nesting", "spike comparison", "surrogate", "trainable coordinate", "spacing of f* (smnist)",
		"stability", "dropout", "readout", "bias", "adam's ε", "cosine", "adaptive-lif", "shd/ssc inputs", "gsc front end",
		"shd* validation split", "recipe: shd best test", "recipe: ssc", "recipe: smnist", "seeds"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no difference covers %q", want)
		}
	}
	// The paper's equation and algorithm numbers where the paper states a form.
	for aspect, ref := range map[string]string{"λ nesting (M ≥ 2)": "Eq. 10", "spike comparison": "Algorithm 1",
		"trainable coordinate of f*": "Eq. 5", "stability of f*": "Appendix A.2", "dropout masks": "Table A.2"} {
		found := false
		for _, d := range ds {
			if d.Aspect == aspect {
				found = true
				if !strings.Contains(d.Paper, ref) {
					t.Errorf("%q cites %q, want %s", aspect, d.Paper, ref)
				}
			}
		}
		if !found {
			t.Errorf("no difference %q", aspect)
		}
	}
}

// flagsOf returns the "--name" tokens of an option string ("--ts-mix=paper --forward-clip" gives
// ["--ts-mix", "--forward-clip"]).
func flagsOf(option string) []string {
	var out []string
	for _, f := range strings.Fields(option) {
		if !strings.HasPrefix(f, "--") {
			continue
		}
		name, _, _ := strings.Cut(f, "=")
		out = append(out, strings.TrimRight(name, ",;()"))
	}
	return out
}

// configKeys returns the JSON keys of the fields in which a and b differ, with b's values.
func configKeys(t *testing.T, a, b train.Config) map[string]any {
	t.Helper()
	var ma, mb map[string]any
	for _, c := range []struct {
		cfg train.Config
		m   *map[string]any
	}{{a, &ma}, {b, &mb}} {
		js, err := json.Marshal(c.cfg)
		if err == nil {
			err = json.Unmarshal(js, c.m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]any{}
	for k := range ma {
		if _, ok := mb[k]; !ok {
			mb[k] = nil
		}
	}
	for k, v := range mb {
		if !reflect.DeepEqual(ma[k], v) {
			out[k] = v
		}
	}
	return out
}

// fidelityStandIn is the study's quick stand-in of a seed with the released semantics: the baseline's
// quick recipe.
func fidelityStandIn(seed int64) (train.Config, error) {
	e, err := Lookup("fidelity/" + VariantBaseline)
	if err != nil {
		return train.Config{}, err
	}
	return e.Config(Quick, seed)
}

func TestVariantsFlipWhatTheirFlagsSay(t *testing.T) {
	base, err := fidelityStandIn(1)
	if err != nil {
		t.Fatal(err)
	}
	if base != base.WithReleasedSemantics() {
		t.Fatal("the stand-in does not have the released semantics")
	}
	names := map[string]bool{}
	allKeys := map[string]bool{}
	for _, v := range Variants() {
		if names[v.Name] {
			t.Errorf("variant %s twice", v.Name)
		}
		names[v.Name] = true
		got := v.Apply(base)
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", v.Name, err)
		}
		changed := configKeys(t, base, got)
		if v.Name == VariantBaseline {
			if len(changed) != 0 || v.Flags != "" {
				t.Errorf("baseline changes %v (flags %q)", changed, v.Flags)
			}
			continue
		}
		if v.Name == VariantFirstForms {
			for k := range allKeys {
				if _, ok := changed[k]; !ok {
					t.Errorf("first-forms does not change %s", k)
				}
			}
			if got.Resolved() != got.Legacy().Resolved() || got.Readout != string(model.ReadoutMean) {
				t.Errorf("first-forms is not the toolkit's first semantics with the mean readout: %+v", got)
			}
			continue
		}
		// Exactly the fields the flags name change, to the flags' values.
		want := map[string]bool{}
		for _, tok := range strings.Fields(v.Flags) {
			name, value, hasValue := strings.Cut(strings.TrimPrefix(tok, "--"), "=")
			key := strings.ReplaceAll(name, "-", "_")
			want[key], allKeys[key] = true, true
			g, ok := changed[key]
			if !ok {
				t.Errorf("%s: %s does not change %s", v.Name, tok, key)
				continue
			}
			switch g := g.(type) {
			case string:
				if g != value {
					t.Errorf("%s: %s = %q, want %q", v.Name, key, g, value)
				}
			case float64:
				f, err := strconv.ParseFloat(value, 64)
				if err != nil || f != g {
					t.Errorf("%s: %s = %g, want %s", v.Name, key, g, value)
				}
			case bool:
				if hasValue || !g {
					t.Errorf("%s: %s = %v from %s", v.Name, key, g, tok)
				}
			}
		}
		for k := range changed {
			if !want[k] {
				t.Errorf("%s also changes %s (flags %q)", v.Name, k, v.Flags)
			}
		}
	}
}

// TestFidelityCells: the study's cells are the variants of ssc/fsts-m2/w512's recipes, the quick one with
// dropout 0.3, with its seeds, in folders <root>/fidelity/<variant>/seed-<n>, all feeding Fidelity.
func TestFidelityCells(t *testing.T) {
	c, err := fidelityStandIn(2)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dataset != synth.ShallowName || c.Model != "fsts" || c.M != 2 || c.Width != 64 || c.Dropout != FidelityQuickDropout ||
		c.Seed != 2 || c.Protocol != train.OfficialVal || c.Epochs != 20 {
		t.Errorf("stand-in %+v", c)
	}
	base, _ := Lookup(fidelityBase)
	cells, err := ForTable(Fidelity)
	if err != nil || len(cells) != len(Variants()) {
		t.Fatalf("%d cells, %v", len(cells), err)
	}
	for i, v := range Variants() {
		e := cells[i]
		if e.ID != "fidelity/"+v.Name || e.Home != Fidelity || e.Row != v.Name || !slices.Equal(e.Tables, []string{Fidelity}) ||
			!slices.Equal(e.QuickSeeds, []int64{1, 2, 3}) || !slices.Equal(e.Seeds, base.Seeds) {
			t.Errorf("cell %d: %+v", i, e)
		}
		if got := RunDir("/r", e.ID, 3); got != filepath.Join("/r", "fidelity", v.Name, "seed-3") {
			t.Errorf("%s: run folder %s", e.ID, got)
		}
		quick := base.Quick
		quick.Dropout = FidelityQuickDropout
		if !reflect.DeepEqual(e.Quick, v.Apply(quick)) || !reflect.DeepEqual(e.Full, v.Apply(base.Full)) {
			t.Errorf("%s: recipes are not the variant of %s's", e.ID, base.ID)
		}
		if !strings.Contains(e.QuickNote, "dropout 0.3") || !strings.Contains(e.FullNote, v.Summary) {
			t.Errorf("%s: notes %q, %q", e.ID, e.QuickNote, e.FullNote)
		}
	}
}
