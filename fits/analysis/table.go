package analysis

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Table is a rectangular table of strings: what an analysis writes as CSV or prints.
type Table struct {
	Header []string
	Rows   [][]string
}

// WriteCSV writes the table as CSV (RFC 4180), header first.
func (t Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Header); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	return cw.Error()
}

// WriteText writes the table as aligned columns of text.
func (t Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for _, c := range row {
			if _, err := io.WriteString(tw, c+"\t"); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(tw, "\n"); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// num formats v for a table with up to prec significant digits; NaN gives "".
func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', prec, 64)
}

// itoa formats an integer.
func itoa(v int) string { return strconv.Itoa(v) }

// Floats is a []float64 whose JSON form writes NaN and ±Inf (not representable in JSON) as null.
type Floats []float64

// MarshalJSON implements json.Marshaler.
func (f Floats) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, ']'), nil
}
