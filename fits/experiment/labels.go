package experiment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/paper"
)

// ParseLabel returns the paper's label (as paper.Labels spells it, e.g. "Table A.7") of a loosely written
// table or figure name. Case, spaces, dots, hyphens and underscores are ignored; "table", "tab",
// "figure" and "fig" prefixes are recognized, and a bare number means a table:
//
//	"Table 3", "table3", "tab3", "3"            -> "Table 3"
//	"Table A.7", "tableA7", "A.7", "a7"         -> "Table A.7"
//	"Figure 2", "fig2", "fig. 2", "figure A.2"  -> "Figure 2", "Figure A.2"
//
// "fidelity" is the study Fidelity. Labels the paper does not have (Table 6, Table A.11) are errors that
// list the valid ones.
func ParseLabel(s string) (string, error) {
	key := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '_', ':', '\t':
			return -1
		}
		return r
	}, strings.ToLower(s))
	if key == strings.ToLower(Fidelity) {
		return Fidelity, nil
	}
	kind := "Table"
	for _, p := range []struct{ prefix, kind string }{
		{"figure", "Figure"}, {"fig", "Figure"}, {"table", "Table"}, {"tab", "Table"},
	} {
		if strings.HasPrefix(key, p.prefix) {
			kind, key = p.kind, strings.TrimPrefix(key, p.prefix)
			break
		}
	}
	appendix := strings.HasPrefix(key, "a")
	num := strings.TrimPrefix(key, "a")
	n, err := strconv.Atoi(num)
	if err == nil && n > 0 && num == strconv.Itoa(n) {
		label := fmt.Sprintf("%s %d", kind, n)
		if appendix {
			label = fmt.Sprintf("%s A.%d", kind, n)
		}
		if slices.Contains(labels(), label) {
			return label, nil
		}
	}
	return "", fmt.Errorf("unknown table or figure %q (valid: %s)", s, strings.Join(labels(), ", "))
}

// labels are the labels experiments can feed: the paper's (paper.Labels), then the study Fidelity.
func labels() []string { return append(paper.Labels(), Fidelity) }
