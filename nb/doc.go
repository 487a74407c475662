// Package nb builds the figures, tables and interactive panels that the notebooks and the `fits figures`
// command show, and runs or reads the training runs behind the paper's tables (Session, Plan). It computes
// nothing of its own: the closed forms come from fits/theory (float64), simulated neurons from fits/sim,
// trained networks and their results from fits/train, fits/experiment and fits/analysis; this package
// samples them on grids and arranges the results beside the paper's numbers.
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
