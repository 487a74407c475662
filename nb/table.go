package nb

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/fits-snn/fits/fits/theory"
)

// Table is a small table of strings shown in a notebook as HTML or Markdown.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// Markdown renders t as a GitHub-flavoured Markdown table, caption in bold above it. A '|' inside a
// cell is escaped.
func (t Table) Markdown() string {
	var b strings.Builder
	if t.Caption != "" {
		fmt.Fprintf(&b, "**%s**\n\n", t.Caption)
	}
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	row := func(cells []string) {
		b.WriteString("|")
		for _, s := range t.cells(cells) {
			b.WriteString(" " + cell(s) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for range t.Header {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// cells returns the cells of row r, one per header column ("" where r is short).
func (t Table) cells(r []string) []string {
	out := make([]string, len(t.Header))
	copy(out, r)
	return out
}

// HTML renders t as an HTML table with the caption, every cell escaped.
func (t Table) HTML() string {
	var b strings.Builder
	b.WriteString(`<table class="fits-table" style="border-collapse:collapse">`)
	if t.Caption != "" {
		fmt.Fprintf(&b, `<caption style="font-weight:bold;text-align:left">%s</caption>`, html.EscapeString(t.Caption))
	}
	b.WriteString("<thead><tr>")
	for _, h := range t.Header {
		fmt.Fprintf(&b, `<th style="border-bottom:1px solid #888;padding:2px 8px;text-align:left">%s</th>`, html.EscapeString(h))
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, s := range t.cells(r) {
			fmt.Fprintf(&b, `<td style="padding:2px 8px">%s</td>`, html.EscapeString(s))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// Values the paper reports (Appendix A.2 and A.6), compared with ours in the tables below.
const (
	PaperExplicitLimitHz     = 13.8 // target-frequency limit of explicit Euler at the SSC constants, Hz
	PaperSemiImplicitLimitHz = 77.2 // target-frequency limit of semi-implicit Euler at the SSC constants, Hz
	PaperPoleExampleOmega    = 1.98 // Ω* in rad/s of the example μ = 4, ρ = 1, κ = 2
)

// Comparison is one paper-vs-ours number.
type Comparison struct {
	Quantity string
	Paper    float64 // as printed in the paper
	Ours     float64 // computed by fits/theory
	Unit     string
	Digits   int // decimals the paper prints; Agrees compares at this precision
}

// Agrees reports whether Ours rounds to within one unit of the paper's last printed digit (the paper
// rounds, e.g. it prints Ω* ≈ 1.98 for 1.9746).
func (c Comparison) Agrees() bool {
	scale := math.Pow(10, float64(c.Digits))
	return math.Abs(math.Round(c.Ours*scale)-math.Round(c.Paper*scale)) <= 1
}

// PaperComparisons returns every number of the theory sections that the paper prints, with ours:
// the Jury target limits at the constants c (the paper uses SSC: 13.8 Hz and 77.2 Hz) and Ω* of the
// pole example of Appendix A.6 (≈ 1.98 rad/s).
func PaperComparisons(c theory.Constants) ([]Comparison, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	j := c.Jury()
	w, ok := PaperPoleExample.Target()
	if !ok {
		return nil, fmt.Errorf("the pole example has no target frequency")
	}
	return []Comparison{
		{"explicit Euler: largest stable target f* (Appendix A.2)", PaperExplicitLimitHz, j.FStarMaxExplicitHz, "Hz", 1},
		{"semi-implicit Euler: largest stable target f* (Appendix A.2)", PaperSemiImplicitLimitHz, j.FStarMaxSemiImplicitHz, "Hz", 1},
		{"Ω* at μ = 4, ρ = 1, κ = 2 (Appendix A.6)", PaperPoleExampleOmega, w, "rad/s", 2},
	}, nil
}

// ComparisonTable renders comparisons as a table: quantity, paper, ours (4 decimals), unit, agreement.
func ComparisonTable(caption string, cs []Comparison) Table {
	t := Table{Caption: caption, Header: []string{"quantity", "paper", "ours", "unit", "agrees"}}
	for _, c := range cs {
		agree := "yes"
		if !c.Agrees() {
			agree = "NO"
		}
		t.Rows = append(t.Rows, []string{c.Quantity, fmt.Sprintf("%.*f", c.Digits, c.Paper), fmt.Sprintf("%.4f", c.Ours), c.Unit, agree})
	}
	return t
}

// JuryTable lists the two Jury bounds on κ (1/s²) at the constants c with the target limits they imply
// (Hz) and the paper's values.
func JuryTable(c theory.Constants) (Table, error) {
	if err := c.Validate(); err != nil {
		return Table{}, err
	}
	j := c.Jury()
	return Table{
		Caption: fmt.Sprintf("Jury stability bounds (Appendix A.2) at τm = %g s, τa = %g s, Δt = %g s", c.TauM, c.TauA, c.Dt),
		Header:  []string{"discretization", "κ bound (1/s²)", "f* limit, ours (Hz)", "f* limit, paper (Hz)"},
		Rows: [][]string{
			{"explicit Euler", fmt.Sprintf("%.6g", j.KappaMaxExplicit), fmt.Sprintf("%.3f", j.FStarMaxExplicitHz), fmt.Sprintf("%.1f", PaperExplicitLimitHz)},
			{"semi-implicit Euler (Eq. 6)", fmt.Sprintf("%.6g", j.KappaMaxSemiImplicit), fmt.Sprintf("%.3f", j.FStarMaxSemiImplicitHz), fmt.Sprintf("%.1f", PaperSemiImplicitLimitHz)},
		},
	}, nil
}

// CTDTTable lists, for each CT target f* (Hz): κ* of Eq. 5, the realized DT target in closed form
// (Theorem 2) and by sweep, their relative error against f*, and κ of the DT-exact inverse (1/s²).
func CTDTTable(c theory.Constants, fstars []float64) (Table, error) {
	if err := c.Validate(); err != nil {
		return Table{}, err
	}
	t := Table{
		Caption: fmt.Sprintf("CT target vs realized DT target (Theorem 2), Δt = %g s", c.Dt),
		Header:  []string{"f*_CT (Hz)", "κ* (1/s²)", "f*_DT closed form (Hz)", "f*_DT sweep (Hz)", "DT/CT − 1", "κ DT-exact (1/s²)"},
	}
	na := "n/a"
	for _, f := range fstars {
		k, err := c.KappaForTargetHz(f)
		if err != nil {
			return Table{}, err
		}
		row := []string{fmt.Sprintf("%g", f), fmt.Sprintf("%.6g", k), na, na, na, na}
		if v, ok := c.DTTargetHz(k); ok {
			row[2] = fmt.Sprintf("%.4f", v)
			row[4] = fmt.Sprintf("%+.2f%%", 100*(v/f-1))
		}
		if v, ok := c.DTSweepTargetHz(k); ok {
			row[3] = fmt.Sprintf("%.4f", v)
		}
		if kx, err := c.KappaDTExact(f); err == nil {
			row[5] = fmt.Sprintf("%.6g", kx)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// PoleExampleTable lists the example of Appendix A.6 (μ = 4, ρ = 1, κ = 2): whether the poles are
// complex (condition Eq. app_complex_pole_condition), the poles, and Ω* (ours and the paper's).
func PoleExampleTable() (Table, error) {
	ex := PaperPoleExample
	w, ok := ex.Target()
	if !ok {
		return Table{}, fmt.Errorf("the pole example has no target frequency")
	}
	_, complexPoles := ex.PoleFrequency()
	p1, p2 := ex.Poles()
	return Table{
		Caption: "Target frequency vs pole frequency (Appendix A.6), μ = 4, ρ = 1, κ = 2",
		Header:  []string{"quantity", "ours", "paper"},
		Rows: [][]string{
			{"complex poles", fmt.Sprintf("%v", complexPoles), "no: 4(μρ+κ) = 24 < 25 = (μ+ρ)²"},
			{"poles (1/s)", fmt.Sprintf("%.4f, %.4f", real(p1), real(p2)), "—"},
			{"Ω* (rad/s)", fmt.Sprintf("%.4f", w), fmt.Sprintf("≈ %.2f", PaperPoleExampleOmega)},
		},
	}, nil
}
