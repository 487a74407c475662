package gonbdisplay

import (
	"github.com/fits-snn/fits/nb"
)

// Display shows a notebook session's output in GoNB's front end (nb.Display): tables as HTML, Markdown,
// figures as PNG; Fail is Check. A notebook opens its session with nb.Open(gonbdisplay.Display{}, tables...).
type Display struct{}

// Table shows t as an HTML table.
func (Display) Table(t nb.Table) { Table(t) }

// Markdown shows Markdown text.
func (Display) Markdown(md string) { Markdown(md) }

// Figure shows fig inline (Figure).
func (Display) Figure(fig *nb.Figure) error { return Figure(fig) }

// Fail ends the cell with err and exit status 1.
func (Display) Fail(err error) { Check(err) }
