package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fits-snn/fits/nb"
)

// figuresOutput is the JSON form of `fits figures --json`.
type figuresOutput struct {
	Out     string   `json:"out"`
	Figures []string `json:"figures"` // figure names, catalog order
	Files   []string `json:"files"`   // paths written, SVG then PNG per figure
}

// runFigures builds the catalog figures of package nb (all, or the groups/names in --only) and
// writes each as <out>/<name>.svg and <out>/<name>.png.
func runFigures(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("figures", stderr)
	out := fs.String("out", "figures", "output folder (created if missing)")
	only := listFlag(fs, "only", "", fmt.Sprintf("comma-separated groups (%s) or figure names; empty means all", strings.Join(nb.Groups(), ",")))
	list := fs.Bool("list", false, "list the figures and exit without writing")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*out) == "" {
		return badInput("--out: empty folder name")
	}
	sel := splitList(*only)
	entries, err := nb.Select(sel)
	if err != nil {
		return badInput("--only: %v", err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	if *list {
		if *asJSON {
			return writeJSON(stdout, figuresOutput{Out: *out, Figures: names, Files: []string{}})
		}
		for _, n := range names {
			fmt.Fprintln(stdout, n)
		}
		return nil
	}
	files, err := writeStaged("out", *out, func(dir string) ([]string, error) { return nb.SaveCatalog(dir, sel) })
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, figuresOutput{Out: *out, Figures: names, Files: files})
	}
	for i := 0; i+1 < len(files); i += 2 {
		fmt.Fprintf(stdout, "wrote %s, %s\n", files[i], files[i+1])
	}
	return nil
}
