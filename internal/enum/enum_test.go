package enum

import "testing"

type color string

func TestParse(t *testing.T) {
	if c, err := Parse("color", "red", color("red"), "blue"); err != nil || c != "red" {
		t.Errorf("Parse(red) = %q, %v", c, err)
	}
	if _, err := Parse("color", "RED", color("red"), "blue"); err == nil || err.Error() != `unknown color "RED" (valid: red, blue)` {
		t.Errorf("Parse(RED): %v", err)
	}
	if c, err := ParseFold("color", "BLUE", color("red"), "blue"); err != nil || c != "blue" {
		t.Errorf("ParseFold(BLUE) = %q, %v", c, err)
	}
	if _, err := ParseFold[color]("color", "green"); err == nil || err.Error() != `unknown color "green" (valid: )` {
		t.Errorf("ParseFold(green) with no values: %v", err)
	}
}
