package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/fits-snn/fits/internal/jsonraw"
)

// jsonFloat is a float64 that encodes NaN and ±Inf as JSON null (encoding/json rejects them).
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// jsonFloats converts a slice to jsonFloat values.
func jsonFloats(v []float64) []jsonFloat {
	out := make([]jsonFloat, len(v))
	for i, x := range v {
		out[i] = jsonFloat(x)
	}
	return out
}

// optFloat returns &v when ok and v is finite, else nil (encoded as JSON null).
func optFloat(v float64, ok bool) *float64 {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// fmtOpt formats an optional value for a text table with format (e.g. "%.6f"), "-" when absent.
func fmtOpt(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// joinFloats formats each value of v times scale with format, comma-separated: the firing rates of a
// text table, e.g. joinFloats(rates, 100, "%.2f%%") gives "12.34%, 5.00%".
func joinFloats(v []float64, scale float64, format string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(format, scale*x)
	}
	return strings.Join(s, ", ")
}

// writeJSON prints v as exactly one JSON object followed by a newline, with the exact bytes of every
// string that is not valid UTF-8 beside it (package jsonraw: the member NAME_base64). Strings that JSON
// cannot tell apart, or a map key that is not UTF-8, are bad input.
func writeJSON(w io.Writer, v any) error {
	b, err := jsonraw.Marshal(v)
	if isErr[*jsonraw.IndistinctError](err) || isErr[*jsonraw.KeyError](err) {
		return badInput("--json: %v", err)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
