// Package nb builds the theory figures, tables and interactive panels that the notebooks and the
// `fits figures` command show. Every number it plots comes from fits/theory (the closed forms of the
// paper, float64); this package only samples those functions on grids and arranges the results.
//
// Figures are gonum/plot plots ([Figure]) rendered to SVG and PNG ([Figure.SVG], [Figure.PNG], [Save]).
// Tables ([Table]) render to Markdown and HTML. [Panel] renders a self-contained HTML/JS widget with
// sliders over τm, τa and f* that redraws precomputed Theorem 1 magnitude responses in the browser; it
// needs no kernel round trip, so it works headless and in exported HTML.
//
// Nothing here talks to a Jupyter kernel: the GoNB display calls live in the subpackage gonbdisplay, so
// the CLI can build figures without a live kernel.
//
// Units follow fits/theory: f in Hz, Ω in rad/s, ω in rad/sample, time constants and Δt in seconds,
// continuous-time group delay in seconds and discrete-time group delay in samples.
package nb
