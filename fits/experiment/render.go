package experiment

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/internal/filesafe"
)

// grouped reports whether the table's rows sit in more than one block (then a Dataset column is shown).
func (t *TableResult) grouped() bool {
	for _, r := range t.Rows {
		if r.Group != t.Rows[0].Group {
			return true
		}
	}
	return false
}

// Header returns the column headers of the rendered table (Body's columns): the row labels, then per
// paper column the paper's value, ours (with finished/expected seeds) and, in full mode, Δ = ours − paper;
// in the comparison tables the parameter counts come before.
func (t *TableResult) Header() []string {
	var h []string
	if t.grouped() {
		h = append(h, "Dataset")
	}
	h = append(h, t.RowHeader)
	h = append(h, t.InfoHeaders...)
	if t.HasParams {
		h = append(h, "# Params (paper)", "# Params (ours)")
	}
	for _, c := range t.Columns {
		name := c
		if _, err := strconv.Atoi(c); err == nil {
			name = "W = " + c
		}
		h = append(h, name+" (paper)", name+" (ours)")
		if t.Mode == Full {
			h = append(h, name+" Δ")
		}
	}
	return h
}

// Body returns the rendered rows, aligned with Header: numbers as text, "—" where there is none.
func (t *TableResult) Body() [][]string {
	var out [][]string
	for _, r := range t.Rows {
		var row []string
		if t.grouped() {
			row = append(row, r.Group)
		}
		row = append(row, r.Label)
		row = append(row, r.Info...)
		for range len(t.InfoHeaders) - len(r.Info) {
			row = append(row, "")
		}
		if t.HasParams {
			pp, po := "—", "—"
			if len(r.Cells) > 0 {
				if c := r.Cells[0]; c.PaperParamsM > 0 {
					pp = strconv.FormatFloat(c.PaperParamsM, 'f', -1, 64) + " M"
				}
				if c := r.Cells[0]; c.Params > 0 {
					po = fmt.Sprintf("%.4f M", float64(c.Params)/1e6)
				}
			}
			row = append(row, pp, po)
		}
		for _, c := range r.Cells {
			paperText := "—"
			if c.Paper != nil {
				paperText = c.Paper.String()
			}
			row = append(row, paperText, t.oursText(c))
			if t.Mode == Full {
				d := "—"
				if c.Diff != nil {
					d = fmt.Sprintf("%+.2f", *c.Diff)
				}
				row = append(row, d)
			}
		}
		out = append(out, row)
	}
	return out
}

// oursText formats our value of a cell: "77.90 ± 0.20 (5/5)", "77.90 (1/5)", "— (0/5)", "baseline" for
// rows quoted from other papers and "no quick run" for cells without a quick stand-in.
func (t *TableResult) oursText(c Cell) string {
	switch {
	case c.Experiment == "":
		return "baseline"
	case c.Expected == 0 && c.Ours == nil:
		return "no " + string(t.Mode) + " run"
	}
	seeds := fmt.Sprintf("(%d/%d)", len(c.Seeds), c.Expected)
	if c.Ours == nil {
		return "— " + seeds
	}
	if t.Label == paper.TableA4 {
		return fmt.Sprintf("%.1f %s", c.Ours.Median, seeds)
	}
	if c.Ours.Std == nil {
		return fmt.Sprintf("%.2f %s", c.Ours.Mean, seeds)
	}
	return fmt.Sprintf("%.2f ± %.2f %s", c.Ours.Mean, *c.Ours.Std, seeds)
}

// Markdown renders the table as GitHub-flavoured Markdown: a bold caption, what the cells hold, the
// table, then the notes as a list.
func (t *TableResult) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s · %s** (ours: %s mode, runs in `%s`)\n\n", t.Label, t.Caption, t.Mode, t.Root)
	fmt.Fprintf(&b, "Cells: %s.\n\n", t.Quantity)
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	h := t.Header()
	line(h)
	b.WriteString("|" + strings.Repeat(" --- |", len(h)) + "\n")
	for _, r := range t.Body() {
		line(r)
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// CSVHeader names the columns of CSV.
var CSVHeader = []string{"table", "group", "row", "column", "experiment", "paper", "paper_std",
	"ours_mean", "ours_std", "ours_median", "seeds_finished", "seeds_expected", "diff",
	"paper_params_m", "params", "wall_minutes_median"}

// CSV renders the table in long form, one line per cell (CSVHeader): accuracies in percent (minutes in
// Table A.4), empty fields where there is no value.
func (t *TableResult) CSV() string {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(CSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			rec := make([]string, len(CSVHeader))
			rec[0], rec[1], rec[2], rec[3], rec[4] = t.Label, r.Group, r.Label, c.Column, c.Experiment
			if c.Paper != nil {
				rec[5] = f(c.Paper.Mean)
				if c.Paper.HasStd {
					rec[6] = f(c.Paper.Std)
				}
			}
			if c.Ours != nil {
				rec[7], rec[9] = f(c.Ours.Mean), f(c.Ours.Median)
				if c.Ours.Std != nil {
					rec[8] = f(*c.Ours.Std)
				}
			}
			rec[10], rec[11] = strconv.Itoa(len(c.Seeds)), strconv.Itoa(c.Expected)
			if c.Diff != nil {
				rec[12] = f(*c.Diff)
			}
			if c.PaperParamsM > 0 {
				rec[13] = f(c.PaperParamsM)
			}
			if c.Params > 0 {
				rec[14] = strconv.Itoa(c.Params)
			}
			if c.WallMinutes != nil {
				rec[15] = f(c.WallMinutes.Median)
			}
			_ = w.Write(rec)
		}
	}
	w.Flush()
	return buf.String()
}

// Stem returns the file stem of a table's files: "table-3", "table-a7" (the label in lower case, spaces
// as '-', dots dropped).
func Stem(label string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(label), ".", ""), " ", "-")
}

// WriteTable writes t into dir (created if missing) as <stem>.md and <stem>.csv (see Stem), replacing
// earlier versions of those two files, and returns their paths.
func WriteTable(dir string, t *TableResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	stem := filepath.Join(dir, Stem(t.Label))
	paths := []string{stem + ".md", stem + ".csv"}
	for i, content := range []string{t.Markdown(), t.CSV()} {
		if err := filesafe.WriteFile(paths[i], []byte(content)); err != nil {
			return nil, err
		}
	}
	return paths, nil
}
