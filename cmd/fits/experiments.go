package main

import (
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
	out := experimentsOutput{Tables: experiment.Tables()}
	if *table == "" {
		out.Experiments = experiment.All()
	} else {
		es, err := experiment.ForTable(*table)
		if err != nil {
			return badInput("--table: %v", err)
		}
		out.Table, _ = experiment.ParseLabel(*table)
		out.Experiments = es
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
