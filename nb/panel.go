package nb

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/fits-snn/fits/fits/theory"
)

// PanelConfig sets the grid of an interactive Theorem 1 panel. Every combination of TauM × TauA ×
// FStar is precomputed; the sliders pick one of each.
type PanelConfig struct {
	TauM  []float64 // membrane time constants τm offered by the slider, seconds
	TauA  []float64 // adaptation time constants τa, seconds
	FStar []float64 // target frequencies f*, Hz
	Dt    float64   // timestep Δt of the discrete-time curve, seconds (smaller than every τ)
	// FMin and FMax bound the plotted frequency axis in Hz (log scale). The DT curve stops at the
	// Nyquist frequency 1/(2Δt).
	FMin, FMax float64
	Points     int     // frequencies per curve
	FloorDB    float64 // the y axis runs from FloorDB (negative) to +3 dB
	Initial    [3]int  // initial slider positions: indices into TauM, TauA, FStar
	Width      int     // SVG width in pixels; 0 means 680
	Height     int     // SVG height in pixels; 0 means 340
}

// DefaultPanelConfig is the panel of notebook 01: τm ∈ {10, 20, 40, 100} ms, τa ∈ {50, 100, 200,
// 500} ms, ten targets from 1 to 70 Hz, Δt = 4 ms, starting at the paper's SSC constants and f* = 10 Hz.
func DefaultPanelConfig() PanelConfig {
	return PanelConfig{
		TauM:    []float64{0.01, 0.02, 0.04, 0.1},
		TauA:    []float64{0.05, 0.1, 0.2, 0.5},
		FStar:   []float64{1, 2, 3, 5, 10, 15, 20, 30, 50, 70},
		Dt:      0.004,
		FMin:    0.1,
		FMax:    125,
		Points:  120,
		FloorDB: -40,
		Initial: [3]int{2, 2, 4},
	}
}

// panelData is what the panel's script receives as JSON. Curves are flattened over the grid:
// entry (i, j, k) of TauM × TauA × FStar is at index (i·len(TauA) + j)·len(FStar) + k.
type panelData struct {
	F      []float64    `json:"f"`      // frequencies, Hz, ascending (log-spaced)
	TauM   []float64    `json:"tauM"`   // s
	TauA   []float64    `json:"tauA"`   // s
	FStar  []float64    `json:"fstar"`  // Hz
	Dt     float64      `json:"dt"`     // s
	Floor  float64      `json:"floor"`  // dB
	CT     [][]float64  `json:"ct"`     // CT |H(jΩ)| in dB relative to its peak at f*, clipped at Floor
	DT     [][]*float64 `json:"dtm"`    // DT |H_d(e^{jω})| in dB relative to its maximum; null above Nyquist
	Kappa  []float64    `json:"kappa"`  // κ* of Eq. 5, 1/s²
	FDT    []*float64   `json:"fdt"`    // realized DT target (Theorem 2), Hz; null when none
	Stable []bool       `json:"stable"` // DT module stable (inside the semi-implicit Jury bound)
}

// Panel is an interactive HTML/JS view of Theorem 1: sliders over τm, τa and f* redraw the continuous-
// time magnitude response |H(jΩ)| (Eq. 3, κ from Eq. 5) and the discrete-time response |H_d(e^{jω})|
// of the semi-implicit FS module (Theorem 2) at Δt. All curves are precomputed by fits/theory and
// embedded as JSON, so the panel works without a kernel: headless, in exported HTML, in any browser.
type Panel struct {
	// ID is the HTML id of the panel's root element; NewPanel picks a random one.
	ID   string
	cfg  PanelConfig
	data panelData
}

// NewPanel precomputes every curve of cfg.
func NewPanel(cfg PanelConfig) (*Panel, error) {
	if len(cfg.TauM) == 0 || len(cfg.TauA) == 0 || len(cfg.FStar) == 0 {
		return nil, fmt.Errorf("panel: empty τm, τa or f* grid")
	}
	if cfg.Points < 2 {
		return nil, fmt.Errorf("panel: %d points per curve, need at least 2", cfg.Points)
	}
	if !(cfg.FMin > 0 && cfg.FMax > cfg.FMin) || math.IsInf(cfg.FMax, 0) {
		return nil, fmt.Errorf("panel: frequency range [%g, %g] Hz is not valid", cfg.FMin, cfg.FMax)
	}
	if !(cfg.FloorDB < 0) {
		return nil, fmt.Errorf("panel: FloorDB %g must be negative", cfg.FloorDB)
	}
	for i, n := range []int{len(cfg.TauM), len(cfg.TauA), len(cfg.FStar)} {
		if cfg.Initial[i] < 0 || cfg.Initial[i] >= n {
			return nil, fmt.Errorf("panel: initial index %d out of range [0, %d)", cfg.Initial[i], n)
		}
	}
	if cfg.Width == 0 {
		cfg.Width = 680
	}
	if cfg.Height == 0 {
		cfg.Height = 340
	}
	d := panelData{
		F: theory.LogSpace(cfg.FMin, cfg.FMax, cfg.Points), TauM: cfg.TauM, TauA: cfg.TauA, FStar: cfg.FStar,
		Dt: cfg.Dt, Floor: cfg.FloorDB,
	}
	for _, tm := range cfg.TauM {
		for _, ta := range cfg.TauA {
			c := theory.Constants{TauM: tm, TauA: ta, Dt: cfg.Dt}
			if err := c.Validate(); err != nil {
				return nil, fmt.Errorf("panel: τm = %g s, τa = %g s, Δt = %g s: %w", tm, ta, cfg.Dt, err)
			}
			for _, fs := range cfg.FStar {
				kappa, err := c.KappaForTargetHz(fs)
				if err != nil {
					return nil, fmt.Errorf("panel: f* = %g Hz: %w", fs, err)
				}
				ct, fsm := c.CT(kappa), c.FS(kappa)
				ref := ct.Magnitude(theory.RadPerSecFromHz(fs))
				ctdb := make([]float64, len(d.F))
				dtmag := make([]float64, len(d.F))
				dtref := 0.0
				for i, f := range d.F {
					ctdb[i] = clipDB(db(ct.Magnitude(theory.RadPerSecFromHz(f))/ref), cfg.FloorDB)
					dtmag[i] = math.NaN()
					if f < c.NyquistHz() {
						dtmag[i] = fsm.Magnitude(c.RadPerSampleFromHz(f))
						dtref = math.Max(dtref, dtmag[i])
					}
				}
				var fdt *float64
				if v, ok := c.DTTargetHz(kappa); ok {
					fdt = ptr(round(v, 3))
					dtref = math.Max(dtref, fsm.Magnitude(c.RadPerSampleFromHz(v)))
				}
				dtdb := make([]*float64, len(d.F))
				for i, m := range dtmag {
					if isFinite(m) && dtref > 0 {
						dtdb[i] = ptr(clipDB(db(m/dtref), cfg.FloorDB))
					}
				}
				d.CT = append(d.CT, ctdb)
				d.DT = append(d.DT, dtdb)
				d.Kappa = append(d.Kappa, round(kappa, 6))
				d.FDT = append(d.FDT, fdt)
				d.Stable = append(d.Stable, fsm.Stable())
			}
		}
	}
	return &Panel{ID: "fits-panel-" + randomHex(6), cfg: cfg, data: d}, nil
}

// index returns the flattened index of slider positions (i, j, k).
func (p *Panel) index(i, j, k int) int {
	return (i*len(p.cfg.TauA)+j)*len(p.cfg.FStar) + k
}

// Curves returns the precomputed curves at slider positions (i, j, k) (indices into TauM, TauA,
// FStar): the frequencies in Hz, the CT magnitude in dB relative to its value at f*, and the DT
// magnitude in dB relative to its maximum (NaN above Nyquist), both clipped at FloorDB.
func (p *Panel) Curves(i, j, k int) (f, ct, dt []float64, err error) {
	if i < 0 || i >= len(p.cfg.TauM) || j < 0 || j >= len(p.cfg.TauA) || k < 0 || k >= len(p.cfg.FStar) {
		return nil, nil, nil, fmt.Errorf("panel: slider position (%d, %d, %d) out of range", i, j, k)
	}
	idx := p.index(i, j, k)
	dt = make([]float64, len(p.data.F))
	for n, v := range p.data.DT[idx] {
		dt[n] = math.NaN()
		if v != nil {
			dt[n] = *v
		}
	}
	return p.data.F, p.data.CT[idx], dt, nil
}

// HTML returns the self-contained snippet: a <div> with three <input type=range> sliders, an inline
// <svg> whose <path> elements (data-curve="ct" and "dt") the embedded script redraws on every slider
// input or change event, a text read-out, and the data as JSON. The paths are also drawn in Go for the
// initial position, so the figure shows even where scripts do not run.
func (p *Panel) HTML() (string, error) {
	data, err := json.Marshal(p.data)
	if err != nil {
		return "", fmt.Errorf("panel: encoding data: %w", err)
	}
	ax := p.axes()
	i, j, k := p.cfg.Initial[0], p.cfg.Initial[1], p.cfg.Initial[2]
	f, ct, dt, err := p.Curves(i, j, k)
	if err != nil {
		return "", err
	}
	view := panelView{
		ID: p.ID, W: ax.w, H: ax.h, Data: template.JS(data),
		Axes: template.JS(mustJSON(ax)),
		TauM: len(p.cfg.TauM) - 1, TauA: len(p.cfg.TauA) - 1, FStar: len(p.cfg.FStar) - 1,
		I: i, J: j, K: k,
		CTPath: ax.path(f, ct), DTPath: ax.path(f, dt),
		XTicks: ax.xTicks(), YTicks: ax.yTicks(),
		PlotX0: ax.x0, PlotX1: ax.w - ax.r, PlotY0: ax.t, PlotY1: ax.h - ax.b,
		Dt: p.cfg.Dt,
	}
	var buf bytes.Buffer
	if err := panelTemplate.Execute(&buf, view); err != nil {
		return "", fmt.Errorf("panel: rendering HTML: %w", err)
	}
	return buf.String(), nil
}

// panelAxes maps (f in Hz, dB) to SVG pixels; the script receives the same numbers, so Go and JS draw
// identical paths.
type panelAxes struct {
	w, h, x0, r, t, b float64
	LogFMin           float64 `json:"lf0"`
	LogFMax           float64 `json:"lf1"`
	DBMin             float64 `json:"db0"`
	DBMax             float64 `json:"db1"`
	X0                float64 `json:"x0"`
	X1                float64 `json:"x1"`
	Y0                float64 `json:"y0"` // pixel of DBMax
	Y1                float64 `json:"y1"` // pixel of DBMin
}

func (p *Panel) axes() panelAxes {
	a := panelAxes{w: float64(p.cfg.Width), h: float64(p.cfg.Height), x0: 52, r: 12, t: 12, b: 40}
	a.LogFMin, a.LogFMax = math.Log10(p.cfg.FMin), math.Log10(p.cfg.FMax)
	a.DBMin, a.DBMax = p.cfg.FloorDB, 3
	a.X0, a.X1, a.Y0, a.Y1 = a.x0, a.w-a.r, a.t, a.h-a.b
	return a
}

func (a panelAxes) px(f float64) float64 {
	return a.X0 + (math.Log10(f)-a.LogFMin)/(a.LogFMax-a.LogFMin)*(a.X1-a.X0)
}

func (a panelAxes) py(v float64) float64 {
	return a.Y1 - (v-a.DBMin)/(a.DBMax-a.DBMin)*(a.Y1-a.Y0)
}

// path returns the SVG path of (f, dB) points, lifting the pen at NaN values; coordinates have one
// decimal, as in the script.
func (a panelAxes) path(f, v []float64) string {
	var b strings.Builder
	pen := false
	for n := range f {
		if !isFinite(v[n]) {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		pen = true
		fmt.Fprintf(&b, "%s%.1f,%.1f", cmd, a.px(f[n]), a.py(v[n]))
	}
	return b.String()
}

type panelTick struct {
	Pos   float64
	Label string
}

func (a panelAxes) xTicks() []panelTick {
	var ts []panelTick
	for e := math.Ceil(a.LogFMin - 1e-9); e <= a.LogFMax+1e-9; e++ {
		f := math.Pow(10, e)
		ts = append(ts, panelTick{a.px(f), fmt.Sprintf("%g", f)})
	}
	return ts
}

func (a panelAxes) yTicks() []panelTick {
	var ts []panelTick
	for v := math.Ceil(a.DBMin/10) * 10; v <= a.DBMax; v += 10 {
		ts = append(ts, panelTick{a.py(v), fmt.Sprintf("%g", v)})
	}
	return ts
}

type panelView struct {
	ID                string
	W, H              float64
	Data, Axes        template.JS
	TauM, TauA, FStar int
	I, J, K           int
	CTPath, DTPath    string
	XTicks, YTicks    []panelTick
	PlotX0, PlotX1    float64
	PlotY0, PlotY1    float64
	Dt                float64
}

func clipDB(v, floor float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	return round(math.Max(v, floor), 2)
}

func round(v float64, digits int) float64 {
	s := math.Pow(10, float64(digits))
	return math.Round(v*s) / s
}

func ptr(v float64) *float64 { return &v }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain numbers: cannot fail
	}
	return b
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var panelTemplate = template.Must(template.New("panel").Parse(`<div class="fits-panel" id="{{.ID}}" style="font-family:sans-serif;font-size:13px;max-width:{{.W}}px">
<div style="display:grid;grid-template-columns:auto 1fr auto;gap:2px 8px;align-items:center;margin-bottom:6px">
<label for="{{.ID}}-taum">τm</label><input id="{{.ID}}-taum" data-param="taum" type="range" min="0" max="{{.TauM}}" step="1" value="{{.I}}"><span data-value="taum"></span>
<label for="{{.ID}}-taua">τa</label><input id="{{.ID}}-taua" data-param="taua" type="range" min="0" max="{{.TauA}}" step="1" value="{{.J}}"><span data-value="taua"></span>
<label for="{{.ID}}-fstar">f*</label><input id="{{.ID}}-fstar" data-param="fstar" type="range" min="0" max="{{.FStar}}" step="1" value="{{.K}}"><span data-value="fstar"></span>
</div>
<div style="margin:2px 0 2px 40px"><span style="color:#0072B2">━ CT |H(jΩ)| (Theorem 1, FS alone), f* dashed</span> &nbsp; <span style="color:#D55E00">━ DT |H_d| (semi-implicit, Δt = {{.Dt}} s), f*_DT dotted</span></div>
<svg width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" xmlns="http://www.w3.org/2000/svg" style="background:#fff">
<g stroke="#e3e3e3" stroke-width="1">{{range .XTicks}}<line x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$.PlotY0}}" y2="{{$.PlotY1}}"/>{{end}}{{range .YTicks}}<line x1="{{$.PlotX0}}" x2="{{$.PlotX1}}" y1="{{.Pos}}" y2="{{.Pos}}"/>{{end}}</g>
<g font-size="11" fill="#333">{{range .XTicks}}<text x="{{.Pos}}" y="{{$.PlotY1}}" dy="14" text-anchor="middle">{{.Label}}</text>{{end}}{{range .YTicks}}<text x="{{$.PlotX0}}" y="{{.Pos}}" dx="-4" dy="4" text-anchor="end">{{.Label}}</text>{{end}}</g>
<text x="{{$.PlotX1}}" y="{{.H}}" dy="-6" text-anchor="end" font-size="12">f (Hz)</text>
<text x="12" y="{{$.PlotY0}}" dy="4" font-size="12" transform="rotate(-90 12 {{$.PlotY0}})" text-anchor="end">dB re peak</text>
<line data-marker="fstar" y1="{{$.PlotY0}}" y2="{{$.PlotY1}}" stroke="#0072B2" stroke-dasharray="4 3"/>
<line data-marker="fdt" y1="{{$.PlotY0}}" y2="{{$.PlotY1}}" stroke="#D55E00" stroke-dasharray="2 3"/>
<path data-curve="ct" d="{{.CTPath}}" fill="none" stroke="#0072B2" stroke-width="2"/>
<path data-curve="dt" d="{{.DTPath}}" fill="none" stroke="#D55E00" stroke-width="2"/>
<g><line x1="{{$.PlotX0}}" x2="{{$.PlotX0}}" y1="{{$.PlotY0}}" y2="{{$.PlotY1}}" stroke="#333"/><line x1="{{$.PlotX0}}" x2="{{$.PlotX1}}" y1="{{$.PlotY1}}" y2="{{$.PlotY1}}" stroke="#333"/></g>
</svg>
<div data-role="readout" style="margin-top:4px">precomputed by fits/theory; move a slider to redraw</div>
<script>
(function () {
  var D = {{.Data}}, A = {{.Axes}}, ID = {{.ID}};
  function start() {
    var root = document.getElementById(ID);
    if (!root) { setTimeout(start, 50); return; }
    var q = function (s) { return root.querySelector(s); };
    var inputs = { taum: q('[data-param=taum]'), taua: q('[data-param=taua]'), fstar: q('[data-param=fstar]') };
    function px(f) { return A.x0 + (Math.log10(f) - A.lf0) / (A.lf1 - A.lf0) * (A.x1 - A.x0); }
    function py(v) { return A.y1 - (v - A.db0) / (A.db1 - A.db0) * (A.y1 - A.y0); }
    function path(ys) {
      var s = '', pen = false;
      for (var n = 0; n < D.f.length; n++) {
        if (ys[n] === null || ys[n] === undefined) { pen = false; continue; }
        s += (pen ? 'L' : 'M') + px(D.f[n]).toFixed(1) + ',' + py(ys[n]).toFixed(1);
        pen = true;
      }
      return s;
    }
    function marker(el, f) {
      if (f === null || f <= Math.pow(10, A.lf0) || f >= Math.pow(10, A.lf1)) { el.setAttribute('visibility', 'hidden'); return; }
      var x = px(f).toFixed(1);
      el.setAttribute('x1', x); el.setAttribute('x2', x); el.setAttribute('visibility', 'visible');
    }
    function update() {
      var i = +inputs.taum.value, j = +inputs.taua.value, k = +inputs.fstar.value;
      var idx = (i * D.tauA.length + j) * D.fstar.length + k;
      q('[data-value=taum]').textContent = (1000 * D.tauM[i]).toFixed(0) + ' ms';
      q('[data-value=taua]').textContent = (1000 * D.tauA[j]).toFixed(0) + ' ms';
      q('[data-value=fstar]').textContent = D.fstar[k] + ' Hz';
      q('[data-curve=ct]').setAttribute('d', path(D.ct[idx]));
      var dt = q('[data-curve=dt]');
      dt.setAttribute('d', path(D.dtm[idx]));
      dt.setAttribute('stroke-dasharray', D.stable[idx] ? '' : '6 4');
      marker(q('[data-marker=fstar]'), D.fstar[k]);
      marker(q('[data-marker=fdt]'), D.fdt[idx]);
      var fdt = D.fdt[idx] === null ? 'none' : D.fdt[idx].toFixed(2) + ' Hz';
      q('[data-role=readout]').textContent = 'κ* = ' + D.kappa[idx].toPrecision(5) + ' 1/s² (Eq. 5)   ·   CT target f* = ' +
        D.fstar[k] + ' Hz   ·   realized DT target f*_DT = ' + fdt + ' (Theorem 2)' +
        (D.stable[idx] ? '' : '   ·   DT module UNSTABLE: κ* is above the semi-implicit Jury bound');
      root.setAttribute('data-index', String(idx));
    }
    for (var name in inputs) {
      inputs[name].addEventListener('input', update);
      inputs[name].addEventListener('change', update);
    }
    update();
  }
  start();
})();
</script>
</div>`))
