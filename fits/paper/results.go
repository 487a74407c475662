package paper

import "fmt"

// Score is a published accuracy in percent: the mean over seeds and, where the paper prints one, the
// standard deviation across seeds.
type Score struct {
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std,omitempty"`
	HasStd bool    `json:"has_std"`
	// Digits is the number of decimals the paper prints (2, or 1 for a few baselines such as "92.1%").
	Digits int `json:"digits"`
}

// String formats the score as the paper prints it, e.g. "95.31 ± 0.21" or "92.1" (percent, no sign).
func (s Score) String() string {
	if s.HasStd {
		return fmt.Sprintf("%.*f ± %.*f", s.Digits, s.Mean, s.Digits, s.Std)
	}
	return fmt.Sprintf("%.*f", s.Digits, s.Mean)
}

// ms returns a two-decimal mean ± std score.
func ms(mean, std float64) Score { return Score{Mean: mean, Std: std, HasStd: true, Digits: 2} }

// m2 returns a two-decimal score without std; m1 a one-decimal one.
func m2(mean float64) Score { return Score{Mean: mean, Digits: 2} }
func m1(mean float64) Score { return Score{Mean: mean, Digits: 1} }

// BenchmarkRow is one row of the comparison tables: Table 1 (SHD, SHD*, SSC), Table 2 (GSC), Table A.9
// (sMNIST) and Table A.10 (DVS Gesture 128). Columns a table does not have are left zero (nil for Rec.
// and Del.).
type BenchmarkRow struct {
	Table string `json:"table"`
	// Dataset is the block of the table the row sits in: "SHD", "SHD*", "SSC", "GSC", "sMNIST" or
	// "DVS Gesture".
	Dataset string `json:"dataset"`
	// Method is the row label as printed, without its citation, e.g. "DCLS-Delays (3L-2KC)" or
	// "FiTS (ours)".
	Method string `json:"method"`
	// Ours marks the paper's own results (the rows our runs reproduce); the others are quoted from the
	// cited papers.
	Ours bool `json:"ours"`
	// Recurrent and Delays are the Rec. and Del. columns (explicit recurrent connections, explicit
	// network-level delays) of Tables 1 and 2.
	Recurrent *bool `json:"recurrent,omitempty"`
	Delays    *bool `json:"delays,omitempty"`
	// Resolution is Table 1's Res. column (temporal resolution), e.g. "4 ms".
	Resolution string `json:"resolution,omitempty"`
	// Mel is Table 2's # Mel column (input frequency bands).
	Mel int `json:"mel,omitempty"`
	// ParamsM is the # Params column in millions, as printed.
	ParamsM float64 `json:"params_m"`
	// Acc is the top-1 test accuracy, percent.
	Acc Score `json:"acc"`
	// Note is the row's footnote, if any.
	Note string `json:"note,omitempty"`
}

// learnableDt is the footnote † of Tables 1 and 2.
const learnableDt = "uses a learnable neuron-wise discretization timestep instead of the shared timestep tied to the input-bin resolution"

// bench1 builds a Table 1 row.
func bench1(dataset, method string, ours, rec, del bool, res string, params float64, acc Score) BenchmarkRow {
	return BenchmarkRow{Table: Table1, Dataset: dataset, Method: method, Ours: ours, Recurrent: &rec, Delays: &del,
		Resolution: res, ParamsM: params, Acc: acc}
}

// Table1Rows returns Table 1 (performance on SHD, SHD* and SSC) in the paper's row order. SHD reports the
// best test accuracy over training; SHD* holds out 20 % of the training set and reports the test accuracy
// at the best validation epoch; SSC uses its official validation split.
func Table1Rows() []BenchmarkRow {
	t := []BenchmarkRow{
		bench1("SHD", "RadLIF", false, true, false, "10 ms", 3.9, m2(94.62)),
		bench1("SHD", "S5-RF", false, true, false, "4 ms", 0.2, m2(91.86)),
		bench1("SHD", "SE-adLIF", false, true, false, "4 ms", 0.45, ms(95.81, 0.56)),
		bench1("SHD", "DCLS-Delays (3L-2KC)", false, false, true, "10 ms", 0.2, ms(95.07, 0.24)),
		bench1("SHD", "DelRec (rec. delays only)", false, true, true, "10 ms", 0.17, ms(93.39, 0.45)),
		bench1("SHD", "Plain LIF (ours)", true, false, false, "4 ms", 0.04, ms(81.74, 0.76)),
		bench1("SHD", "TC-LIF", false, false, false, "5.6 ms", 0.11, m2(83.08)),
		bench1("SHD", "cAdLIF", false, false, false, "10 ms", 0.04, m2(94.19)),
		bench1("SHD", "DH-SFNN", false, false, false, "1 ms", 0.05, m1(92.1)),
		bench1("SHD", "C-SiLIF", false, false, false, "4 ms", 0.35, ms(89.30, 1.20)),
		bench1("SHD", "FiTS (ours)", true, false, false, "4 ms", 0.04, ms(95.31, 0.21)),

		bench1("SHD*", "SE-adLIF", false, true, false, "4 ms", 0.45, ms(93.79, 0.76)),
		bench1("SHD*", "DelRec (rec. delays only)", false, true, true, "10 ms", 0.24, ms(93.73, 0.69)),
		bench1("SHD*", "Plain LIF (ours)", true, false, false, "4 ms", 0.11, ms(79.34, 0.67)),
		bench1("SHD*", "FiTS (ours)", true, false, false, "4 ms", 0.11, ms(94.38, 0.12)),

		bench1("SSC", "RadLIF", false, true, false, "10 ms", 3.9, m1(77.4)),
		bench1("SSC", "S5-RF", false, true, false, "4 ms", 1.75, m1(78.8)),
		bench1("SSC", "SE-adLIF", false, true, false, "4 ms", 1.6, ms(80.44, 0.26)),
		bench1("SSC", "DCLS-Delays (3L-2KC)", false, false, true, "10 ms", 2.5, ms(80.69, 0.21)),
		bench1("SSC", "DelRec (rec. delays only)", false, true, true, "5.6 ms", 0.37, ms(82.58, 0.08)),
		bench1("SSC", "Plain LIF (ours)", true, false, false, "4 ms", 0.35, ms(69.17, 0.18)),
		bench1("SSC", "TC-LIF", false, false, false, "5.6 ms", 0.11, m2(63.46)),
		bench1("SSC", "cAdLIF", false, false, false, "10 ms", 0.35, m1(77.5)),
		bench1("SSC", "DH-SFNN", false, false, false, "1 ms", 0.27, m2(81.03)),
		bench1("SSC", "C-SiLIF", false, false, false, "4 ms", 0.35, ms(81.59, 0.31)),
		bench1("SSC", "FiTS (ours)", true, false, false, "4 ms", 0.35, ms(78.23, 0.16)),
	}
	t[24].Note = learnableDt
	return t
}

// Table2Rows returns Table 2 (performance on GSC with 40-band log-Mel inputs, 10 ms hop, about 100
// steps) in the paper's row order.
func Table2Rows() []BenchmarkRow {
	row := func(method string, ours, rec, del bool, mel int, params float64, acc Score) BenchmarkRow {
		r := bench1("GSC", method, ours, rec, del, "", params, acc)
		r.Table, r.Mel = Table2, mel
		return r
	}
	t := []BenchmarkRow{
		row("RadLIF", false, true, false, 40, 0.83, m2(94.51)),
		row("DCLS-Delays (3L-2KC)", false, false, true, 140, 2.5, ms(95.35, 0.04)),
		row("Plain LIF (ours)", true, false, false, 40, 0.30, ms(80.22, 0.16)),
		row("cAdLIF", false, false, false, 40, 0.30, m2(94.67)),
		row("SiLIF", false, false, false, 40, 1.1, ms(95.49, 0.09)),
		row("FiTS (ours)", true, false, false, 40, 0.30, ms(94.48, 0.12)),
	}
	t[4].Note = learnableDt
	return t
}

// TableA9Rows returns Table A.9 (sMNIST) in the paper's row order; parameter counts as the cited papers
// give them.
func TableA9Rows() []BenchmarkRow {
	row := func(method string, ours bool, params float64, acc Score) BenchmarkRow {
		return BenchmarkRow{Table: TableA9, Dataset: "sMNIST", Method: method, Ours: ours, ParamsM: params, Acc: acc}
	}
	return []BenchmarkRow{
		row("TC-LIF", false, 0.09, m2(97.35)),
		row("S5-RF", false, 0.04, m2(98.89)),
		row("DH-SRNN", false, 0.08, m2(98.90)),
		row("D-RF", false, 0.16, m2(99.50)),
		row("PMSN", false, 0.16, m2(99.53)),
		row("PRF", false, 0.07, m2(99.18)),
		row("FiTS (ours, M = 1, W = 256)", true, 0.07, m2(98.28)),
	}
}

// TableA10Rows returns Table A.10 (DVS Gesture 128, official train/test split, final-epoch test accuracy
// over 5 seeds; every model uses the same convolutional network).
func TableA10Rows() []BenchmarkRow {
	row := func(method string, params float64, acc Score) BenchmarkRow {
		return BenchmarkRow{Table: TableA10, Dataset: "DVS Gesture", Method: method, Ours: true, ParamsM: params, Acc: acc}
	}
	return []BenchmarkRow{
		row("Plain LIF", 0.0726, ms(87.01, 1.34)),
		row("FS-only (M = 0)", 0.0728, ms(89.72, 0.84)),
		row("FS+TS (M = 1)", 0.0732, ms(90.00, 0.86)),
		row("FS+TS (M = 2)", 0.0735, ms(90.35, 1.08)),
	}
}

// BenchmarkRows returns the rows of Table 1, 2, A.9 or A.10 (nil for another label).
func BenchmarkRows(label string) []BenchmarkRow {
	switch label {
	case Table1:
		return Table1Rows()
	case Table2:
		return Table2Rows()
	case TableA9:
		return TableA9Rows()
	case TableA10:
		return TableA10Rows()
	}
	return nil
}

// AblationCell is one cell of the factorized ablations across hidden sizes: Table 3 (SSC), Table A.5
// (GSC), Table A.6 (SHD*, validation-split protocol) and Table A.7 (SSC with M = 3, 4, 5 added).
type AblationCell struct {
	Table   string `json:"table"`
	Dataset string `json:"dataset"` // "SSC", "GSC" or "SHD*"
	// Row is the row label as printed, e.g. "FS (Frozen target frequency)" or "FS + TS (M = 2)".
	Row string `json:"row"`
	// Model is the neuron kind of the row (the names of fits/neuron: lif, adaptlif, fs-frozen, fs, fsts)
	// and Order its TS cascade order M.
	Model string `json:"model"`
	Order int    `json:"m"`
	// Width is the hidden width W (the column).
	Width int   `json:"width"`
	Acc   Score `json:"acc"`
}

// AblationRow names one row of the ablation tables.
type AblationRow struct {
	Label string `json:"label"`
	Model string `json:"model"`
	Order int    `json:"m"`
}

// AblationRows returns the rows of the ablation tables in the paper's order: Plain LIF, the adaptive LIF
// with frozen zero-initialized adaptation, FS with frozen and with learnable target frequency, then
// FS + TS for M = 1 … maxOrder (2 in Tables 3, A.5 and A.6; 5 in Table A.7).
func AblationRows(maxOrder int) []AblationRow {
	rows := []AblationRow{
		{"Plain LIF", "lif", 0},
		{"Adapt. LIF (Frozen zero init.)", "adaptlif", 0},
		{"FS (Frozen target frequency)", "fs-frozen", 0},
		{"FS (Learnable target frequency)", "fs", 0},
	}
	for m := 1; m <= maxOrder; m++ {
		rows = append(rows, AblationRow{fmt.Sprintf("FS + TS (M = %d)", m), "fsts", m})
	}
	return rows
}

// ablation expands a table of mean, std pairs (rows as AblationRows, columns as Widths) into cells.
func ablation(table, dataset string, cells [][4][2]float64) []AblationCell {
	rows := AblationRows(len(cells) - 4)
	var out []AblationCell
	for i, r := range rows {
		for j, w := range Widths() {
			out = append(out, AblationCell{Table: table, Dataset: dataset, Row: r.Label, Model: r.Model, Order: r.Order,
				Width: w, Acc: ms(cells[i][j][0], cells[i][j][1])})
		}
	}
	return out
}

// sscLadder holds the SSC ablation numbers shared by Table 3 and the first six rows of Table A.7.
var sscLadder = [][4][2]float64{
	{{60.91, 0.28}, {65.91, 0.16}, {68.52, 0.15}, {69.17, 0.18}},
	{{61.18, 0.22}, {65.96, 0.14}, {68.38, 0.13}, {68.88, 0.13}},
	{{69.46, 0.30}, {73.75, 0.15}, {76.15, 0.20}, {77.13, 0.22}},
	{{71.72, 0.12}, {74.94, 0.16}, {76.81, 0.08}, {77.78, 0.15}},
	{{72.58, 0.08}, {75.69, 0.12}, {77.28, 0.06}, {78.22, 0.12}},
	{{73.16, 0.30}, {75.94, 0.16}, {77.50, 0.18}, {78.23, 0.16}},
}

// AblationCells returns the cells of Table 3, A.5, A.6 or A.7 (by row, then width), nil for another label.
func AblationCells(label string) []AblationCell {
	switch label {
	case Table3:
		return ablation(Table3, "SSC", sscLadder)
	case TableA5:
		return ablation(TableA5, "GSC", [][4][2]float64{
			{{74.17, 0.32}, {78.02, 0.18}, {77.61, 0.37}, {80.22, 0.16}},
			{{74.45, 0.38}, {78.05, 0.25}, {77.91, 0.15}, {79.89, 0.19}},
			{{84.99, 0.31}, {89.72, 0.15}, {91.82, 0.14}, {92.50, 0.15}},
			{{89.84, 0.06}, {92.01, 0.10}, {92.89, 0.10}, {93.27, 0.12}},
			{{90.89, 0.16}, {92.95, 0.10}, {94.08, 0.20}, {94.48, 0.12}},
			{{90.94, 0.18}, {93.06, 0.04}, {93.94, 0.12}, {93.96, 0.14}},
		})
	case TableA6:
		return ablation(TableA6, "SHD*", [][4][2]float64{
			{{77.80, 0.69}, {78.82, 0.78}, {79.34, 0.67}, {79.70, 0.35}},
			{{77.50, 0.67}, {78.16, 0.84}, {79.47, 0.57}, {79.47, 0.36}},
			{{90.43, 0.56}, {91.55, 0.39}, {92.30, 0.38}, {92.30, 0.35}},
			{{93.01, 0.18}, {93.70, 0.14}, {93.99, 0.12}, {94.02, 0.21}},
			{{93.47, 0.20}, {94.12, 0.30}, {93.99, 0.15}, {94.07, 0.11}},
			{{93.25, 0.38}, {93.39, 0.15}, {94.38, 0.12}, {94.04, 0.24}},
		})
	case TableA7:
		return ablation(TableA7, "SSC", append(append([][4][2]float64{}, sscLadder...),
			[4][2]float64{{73.01, 0.10}, {75.93, 0.13}, {77.47, 0.08}, {78.23, 0.15}},
			[4][2]float64{{73.06, 0.13}, {75.97, 0.21}, {77.47, 0.16}, {78.25, 0.14}},
			[4][2]float64{{73.16, 0.08}, {75.87, 0.05}, {77.46, 0.09}, {78.12, 0.10}},
		))
	}
	return nil
}

// Energy is one row of Table 4: the estimated theoretical energy (μJ) on SSC at width 512, from AC/MAC
// counts (EnergyACpJ, EnergyMACpJ) and mean firing rates on the SSC validation split.
type Energy struct {
	Row      string  `json:"row"` // as printed, e.g. "FS+TS (M=2)"
	Model    string  `json:"model"`
	Order    int     `json:"m"`
	LayerUJ  float64 `json:"e_layer_uj"`  // spike-driven linear layers
	NeuronUJ float64 `json:"e_neuron_uj"` // neuron-internal updates
	TotalUJ  float64 `json:"e_total_uj"`
}

// Energy costs of Section 5.2 (45 nm CMOS, after Horowitz), picojoules per operation.
const (
	EnergyACpJ  = 0.9 // one accumulate
	EnergyMACpJ = 4.6 // one multiply-accumulate
	// EnergyWidth is the hidden width of Table 4.
	EnergyWidth = 512
)

// EnergyTable returns Table 4 in the paper's row order.
func EnergyTable() []Energy {
	return []Energy{
		{"Plain LIF", "lif", 0, 6.1, 2.8, 8.9},
		{"Adapt. (Frozen zero init.)", "adaptlif", 0, 8.5, 4.5, 13.0},
		{"FS (Frozen target freq.)", "fs-frozen", 0, 5.1, 6.8, 11.9},
		{"FS (Learnable target freq.)", "fs", 0, 5.0, 6.8, 11.8},
		{"FS+TS (M=1)", "fsts", 1, 3.8, 12.2, 16.0},
		{"FS+TS (M=2)", "fsts", 2, 2.7, 17.6, 20.3},
	}
}

// CTDT is one row of Table 5 (CT-to-DT alignment of a model trained on SHD): errors in Hz against the
// realized discrete-time target frequency f*_DT found by sweeping each neuron's magnitude response.
type CTDT struct {
	Comparison string  `json:"comparison"`
	MAEHz      float64 `json:"mae_hz"`
	MaxHz      float64 `json:"max_hz"`
}

// CTDTTable returns Table 5: the CT target f*_CT and the closed-form DT target (Theorem 2), each
// against the realized DT target.
func CTDTTable() []CTDT {
	return []CTDT{
		{"CT target f*_CT vs realized DT f*_DT", 0.7605, 7.4020},
		{"closed-form DT f̂*_DT vs realized DT f*_DT", 0.0019, 0.0038},
	}
}

// TrainingTime is one cell of Table A.4: the median per-run training time in minutes on one NVIDIA RTX
// A5000 GPU (KernelRuntimeGPU) with the fused kernel, by dataset, TS order M (0: FS only) and width W.
type TrainingTime struct {
	Dataset string  `json:"dataset"` // "SHD", "SSC" or "GSC"
	Order   int     `json:"m"`
	Width   int     `json:"width"`
	Minutes float64 `json:"minutes"`
}

// TrainingTimes returns the 36 cells of Table A.4 in the paper's order (dataset, M, W).
func TrainingTimes() []TrainingTime {
	rows := []struct {
		dataset string
		m       int
		min     [4]float64
	}{
		{"SHD", 0, [4]float64{6.6, 6.6, 6.0, 8.4}},
		{"SHD", 1, [4]float64{6.0, 6.6, 6.6, 7.8}},
		{"SHD", 2, [4]float64{6.6, 6.6, 6.6, 8.4}},
		{"SSC", 0, [4]float64{51.0, 50.4, 52.2, 68.4}},
		{"SSC", 1, [4]float64{51.6, 53.4, 52.2, 69.0}},
		{"SSC", 2, [4]float64{50.4, 54.0, 52.8, 69.0}},
		{"GSC", 0, [4]float64{19.8, 19.8, 21.6, 22.2}},
		{"GSC", 1, [4]float64{21.0, 20.4, 21.0, 24.0}},
		{"GSC", 2, [4]float64{21.0, 21.0, 21.0, 24.0}},
	}
	var out []TrainingTime
	for _, r := range rows {
		for i, w := range Widths() {
			out = append(out, TrainingTime{Dataset: r.dataset, Order: r.m, Width: w, Minutes: r.min[i]})
		}
	}
	return out
}

// Perturbation is one row of Table A.8: test accuracy (percent) of 5 FS-only (M = 0) SSC checkpoints of
// width W, unperturbed (Full), with the target frequencies reset to their initial log-scale values, and
// with them shuffled within each layer; the changes are paired differences from the unperturbed
// checkpoint (mean ± std over the 5 pairs).
type Perturbation struct {
	Width         int   `json:"width"`
	Full          Score `json:"full"`
	Reset         Score `json:"reset"`
	ResetChange   Score `json:"reset_change"`
	Shuffle       Score `json:"shuffle"`
	ShuffleChange Score `json:"shuffle_change"`
}

// Perturbations returns Table A.8 in the paper's order (by width).
func Perturbations() []Perturbation {
	return []Perturbation{
		{64, ms(71.72, 0.12), ms(20.95, 6.80), ms(-50.78, 6.78), ms(3.69, 1.13), ms(-68.03, 1.12)},
		{128, ms(74.94, 0.16), ms(44.39, 7.46), ms(-30.55, 7.51), ms(3.49, 1.12), ms(-71.45, 1.10)},
		{256, ms(76.81, 0.08), ms(69.86, 0.72), ms(-6.95, 0.74), ms(4.20, 0.48), ms(-72.61, 0.44)},
		{512, ms(77.78, 0.15), ms(73.43, 0.49), ms(-4.34, 0.43), ms(3.59, 0.34), ms(-74.19, 0.30)},
	}
}
