package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
)

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
