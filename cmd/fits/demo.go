package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/fits-snn/fits/fits/paper"
)

func init() {
	register(&command{
		name:    "demo",
		summary: "print the paper-vs-ours tables (theory numbers)",
		run:     runDemo,
	})
}

// demoOutput is the JSON form of `fits demo --json`.
type demoOutput struct {
	Theory []demoRow `json:"theory"`
}

type demoRow struct {
	paper.Row
	Match bool `json:"match"`
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rows, err := paper.TheoryRows()
	if err != nil {
		return err
	}
	out := demoOutput{}
	for _, r := range rows {
		out.Theory = append(out.Theory, demoRow{Row: r, Match: r.Match()})
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintln(stdout, "Theory: the paper's closed-form numbers beside fits/theory (n/a: different setups, shown for scale)")
	printRows(stdout, out.Theory)
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
