package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/experiment"
)

// experimentsOutput is the JSON form of `fits experiments --json`.
type experimentsOutput struct {
	Table       string                  `json:"table,omitempty"`
	Tables      []string                `json:"tables"`
	Experiments []experiment.Experiment `json:"experiments"`
}

func runExperiments(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiments", stderr)
	table := fs.String("table", "", `only the experiments feeding this table or figure ("Table 3", "3", "A.7", "fig2", ...)`)
	asJSON := fs.Bool("json", false, "print one JSON object with an \"experiments\" array carrying every field")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	out := experimentsOutput{Tables: experiment.Tables(), Experiments: experiment.All()}
	if *table != "" {
		var err error
		if out.Experiments, err = experiment.ForTable(*table); err != nil {
			return badInput("--table: %v", err)
		}
		out.Table, _ = experiment.ParseLabel(*table)
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\ttables\tfull recipe\tquick stand-in\ttitle")
	for _, e := range out.Experiments {
		quick := "—"
		if e.HasQuick() {
			quick = fmt.Sprintf("%s W=%d %d ep", e.Quick.Dataset, e.Quick.Width, e.Quick.Epochs)
		}
		full := fmt.Sprintf("%s %s lr=%g p=%g", e.Full.Dataset, e.Full.Protocol, e.Full.LR, e.Full.Dropout)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, strings.Join(e.Tables, ", "), full, quick, e.Title)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\n%d experiments. Train one: fits train --experiment=ID [--mode=quick]; aggregate: fits aggregate --table=NAME --root=DIR.\n", len(out.Experiments))
	return nil
}

func runAggregate(args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("aggregate", stderr)
	table := fset.String("table", "", "the table: "+strings.Join(experiment.AggregatedTables(), ", ")+` (also "3", "A.7", ...)`)
	root := fset.String("root", "", "folder of the runs, laid out as ROOT/ID/seed-N (what `fits train --experiment` writes under runs/MODE)")
	results := fset.String("results", experiment.ShippedDir, "shipped results laid out like --root (the repository's results/, trained on the real data): in full mode a seed --root lacks is read from here, in quick mode the notes name them; \"\" for none (a missing default folder is skipped)")
	modeName := fset.String("mode", string(experiment.Full), "which recipe the runs followed: full or quick")
	out := fset.String("out", "", "also write the table as Markdown and CSV into this folder (table-3.md, table-3.csv)")
	asJSON := fset.Bool("json", false, "print the table as one JSON object")
	if err := parseFlags(fset, args); err != nil {
		return err
	}
	if *table == "" {
		return badInput("--table is required (valid: %s)", strings.Join(experiment.AggregatedTables(), ", "))
	}
	if *root == "" {
		return badInput("--root is required (the folder holding ID/seed-N run folders)")
	}
	if !isDir(*root) {
		return badInput("--root=%s is not a folder of runs", *root)
	}
	mode, err := experiment.ParseMode(*modeName)
	if err != nil {
		return badInput("--mode: %v", err)
	}
	label, err := experiment.ParseLabel(*table)
	if err != nil {
		return badInput("--table: %v", err)
	}
	var shipped []string
	switch {
	case *results != "" && isDir(*results):
		shipped = append(shipped, *results)
	case *results != "" && setFlags(fset)["results"]:
		return badInput("--results=%s is not a folder of runs", *results)
	}
	t, err := experiment.Aggregate(*root, label, mode, shipped...)
	switch {
	case errors.Is(err, experiment.ErrNotAggregated):
		return badInput("--table: %v", err)
	case err != nil:
		return err
	}
	if *out != "" {
		paths, err := writeStaged("out", *out, func(dir string) ([]string, error) { return experiment.WriteTable(dir, t) })
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintf(stderr, "wrote %s\n", p)
		}
	}
	if *asJSON {
		return writeJSON(stdout, t)
	}
	_, err = io.WriteString(stdout, t.Markdown())
	return err
}
