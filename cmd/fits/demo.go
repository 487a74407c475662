package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// The demo's recipe on the synthetic task: enough for the ablation ordering to show in a short run on a CPU
// (measured: docs/performance-notes.md). The model is selected on the
// task's validation split and the test accuracy at that epoch is reported (protocol official-val).
const (
	demoEpochs = 20
	demoBatch  = 64
)

// demoOutput is the JSON form of `fits demo --json`.
type demoOutput struct {
	Theory []demoRow      `json:"theory"`
	Train  []demoTrainRow `json:"train,omitempty"`
}

type demoRow struct {
	paper.Row
	Match bool `json:"match"`
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	doTrain := fs.Bool("train", true, "train the five models of the ablation ladder on the synthetic task")
	retrain := fs.Bool("retrain", false, "train again even when the finished run of the same configuration exists, into a new folder beside it (nothing is deleted)")
	dir := fs.String("out", filepath.Join("runs", "demo"), "folder of the demo's training runs: one folder per model and settings, e.g. fsts-m1-e20-w64-b64-s1; folders holding anything else are refused, never overwritten")
	base := train.DefaultConfig()
	base.Batch, base.Protocol = demoBatch, train.OfficialVal
	fs.IntVar(&base.Epochs, "epochs", demoEpochs, "training epochs per model")
	fs.IntVar(&base.Width, "width", base.Width, "neurons per hidden layer")
	fs.IntVar(&base.Batch, "batch", base.Batch, "examples per step")
	seed := fs.Int64("seed", base.Seed, "random seed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if base.Epochs < 1 || base.Width < 1 || base.Batch < 1 {
		return badInput("--epochs, --width and --batch must be positive")
	}
	base.Seed = *seed
	rows, err := paper.TheoryRows()
	if err != nil {
		return err
	}
	out := demoOutput{}
	for _, r := range rows {
		out.Theory = append(out.Theory, demoRow{Row: r, Match: r.Match()})
	}
	if *doTrain {
		out.Train, err = demoTrain(base, *dir, *retrain, stderr)
		if err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintln(stdout, "Theory: the paper's closed-form numbers beside fits/theory (n/a: different setups, shown for scale)")
	printRows(stdout, out.Theory)
	if *doTrain {
		fmt.Fprintf(stdout, "\nAblation ladder on the embedded synthetic task (%d epochs, batch %d, width %d, seed %d, test accuracy at the best validation epoch; the paper's SSC ordering: LIF ≈ adaptive < FS frozen < FS < FS+TS)\n", base.Epochs, base.Batch, base.Width, base.Seed)
		printTrainRows(stdout, out.Train)
	}
	return nil
}

// printRows prints paper-vs-ours rows as an aligned table; notes follow, numbered.
func printRows(w io.Writer, rows []demoRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "quantity\twhere\tpaper\tours\tunit\tagree")
	var notes []string
	for _, r := range rows {
		agree := "yes"
		switch {
		case r.Indicative:
			agree = "n/a"
		case !r.Match:
			agree = "NO"
		}
		q := r.Quantity
		if r.Note != "" {
			notes = append(notes, r.Note)
			q += fmt.Sprintf(" [%d]", len(notes))
		}
		ours := fmt.Sprintf("%.*f", r.Digits+2, r.Ours)
		if r.Ours != 0 && math.Abs(r.Ours) < math.Pow(10, -float64(r.Digits)) {
			ours = fmt.Sprintf("%.2g", r.Ours)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.*f\t%s\t%s\t%s\n", q, r.Where, r.Digits, r.Paper, ours, r.Unit, agree)
	}
	tw.Flush()
	for i, n := range notes {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, strings.TrimSpace(n))
	}
}
