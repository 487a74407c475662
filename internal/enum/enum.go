// Package enum parses the names of string enumerations (the neuron kinds, readouts, protocols, modes, ...)
// with one error message for all of them: unknown WHAT "NAME" (valid: A, B, C).
package enum

import (
	"fmt"
	"strings"
)

// Parse returns the value of valid equal to s, else an error naming what and listing the valid values.
func Parse[T ~string](what, s string, valid ...T) (T, error) {
	return parse(what, s, func(v string) bool { return v == s }, valid)
}

// ParseFold is Parse with the names compared in any case (strings.EqualFold); it returns the value as
// valid spells it.
func ParseFold[T ~string](what, s string, valid ...T) (T, error) {
	return parse(what, s, func(v string) bool { return strings.EqualFold(v, s) }, valid)
}

func parse[T ~string](what, s string, match func(string) bool, valid []T) (T, error) {
	for _, v := range valid {
		if match(string(v)) {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown %s %q (valid: %s)", what, s, strings.Join(Names(valid...), ", "))
}

// Names returns the values as strings, for help texts and error messages.
func Names[T ~string](values ...T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
