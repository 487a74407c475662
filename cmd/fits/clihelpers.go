package main

import (
	"encoding/json"
	"math"
	"strconv"
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

// fmtOpt formats an optional value for a text table with the given precision, "-" when absent.
func fmtOpt(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}
