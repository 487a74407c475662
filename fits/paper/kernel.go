package paper

import "slices"

// KernelRuntime is one cell of Table A.3 (runtime of the temporal FiTS update): one training iteration
// (forward and backward passes) of a network of two hidden FiTS layers of width W with TS order M on
// SSC-like tensor shapes, as the median milliseconds per iteration on one NVIDIA RTX A5000 GPU, for a
// PyTorch timestep loop and for the fused Triton implementation.
type KernelRuntime struct {
	Width int `json:"width"` // W, neurons per hidden layer
	Order int `json:"m"`     // M, TS cascade order (0: FS only)
	// PyTorchMs and TritonMs are median milliseconds per iteration.
	PyTorchMs float64 `json:"pytorch_ms"`
	TritonMs  float64 `json:"triton_ms"`
	// Speedup is the Triton speedup over the PyTorch loop as the paper prints it (two decimals).
	Speedup float64 `json:"speedup"`
}

// KernelRuntimeGPU names the device of KernelRuntimes.
const KernelRuntimeGPU = "NVIDIA RTX A5000"

// KernelRuntimes returns the twelve cells of Table A.3, W ∈ {64, 128, 256, 512}
// and M ∈ {0, 1, 2}, in the paper's order (by W, then M).
func KernelRuntimes() []KernelRuntime {
	cells := [4][3][3]float64{ // by W as Widths, then M: PyTorch ms, Triton ms, speedup
		{{426.7, 8.3, 51.16}, {627.1, 7.3, 86.35}, {861.8, 6.7, 129.04}},
		{{521.8, 7.3, 71.13}, {704.2, 12.8, 54.81}, {876.6, 10.4, 84.35}},
		{{537.8, 17.3, 31.09}, {933.3, 6.9, 134.56}, {1099.9, 20.6, 53.30}},
		{{1079.4, 33.5, 32.20}, {1385.9, 25.0, 55.41}, {1437.2, 33.0, 43.51}},
	}
	var out []KernelRuntime
	for i, w := range Widths() {
		for m, c := range cells[i] {
			out = append(out, KernelRuntime{w, m, c[0], c[1], c[2]})
		}
	}
	return out
}

// KernelRuntimeFor returns the paper's cell for width W and order M, and whether the table has it.
func KernelRuntimeFor(width, order int) (KernelRuntime, bool) {
	return find(KernelRuntimes(), func(k KernelRuntime) bool { return k.Width == width && k.Order == order })
}

// find returns the first of rows that match accepts, and whether there is one.
func find[T any](rows []T, match func(T) bool) (T, bool) {
	if i := slices.IndexFunc(rows, match); i >= 0 {
		return rows[i], true
	}
	var zero T
	return zero, false
}

// FrameworkRuntime is one published result of the Open Neuromorphic SNN library benchmark: one linear
// layer (n inputs to n outputs) followed by a LIF layer of n neurons, input [batch 16, 500 time steps,
// n], loss = sum of the output spikes, forward and backward pass, seconds per iteration on one NVIDIA
// RTX 4090 (full precision). Source: the benchmark's published results (open-neuromorphic.org, "Spiking
// Neural Network (SNN) Library Benchmarks", 2023, updated 2024-02-20), the forward and backward columns
// of its data file added.
type FrameworkRuntime struct {
	Framework string  `json:"framework"`
	Neurons   int     `json:"neurons"`
	ForwardS  float64 `json:"forward_s"`
	BackwardS float64 `json:"backward_s"`
}

// TotalS is the forward plus backward time in seconds per iteration.
func (f FrameworkRuntime) TotalS() float64 { return f.ForwardS + f.BackwardS }

// FrameworkRuntimeGPU names the device of FrameworkRuntimes.
const FrameworkRuntimeGPU = "NVIDIA RTX 4090"

// FrameworkRuntimes returns the published Open Neuromorphic benchmark times for spyx (JAX, fp32),
// SpikingJelly with its CuPy backend, Norse with torch.compile and snnTorch, at 4096, 8192 and 16384
// neurons.
func FrameworkRuntimes() []FrameworkRuntime {
	return []FrameworkRuntime{
		{"spyx fp32", 4096, 0.004005, 0.006976},
		{"spyx fp32", 8192, 0.012134, 0.018808},
		{"spyx fp32", 16384, 0.029881, 0.046475},
		{"SpikingJelly CuPy", 4096, 0.005455, 0.004507},
		{"SpikingJelly CuPy", 8192, 0.012078, 0.029318},
		{"SpikingJelly CuPy", 16384, 0.019735, 0.098437},
		{"Norse torch.compile", 4096, 0.006653, 0.006426},
		{"Norse torch.compile", 8192, 0.016818, 0.022097},
		{"Norse torch.compile", 16384, 0.028869, 0.080625},
		{"snnTorch", 4096, 0.108426, 0.157031},
		{"snnTorch", 8192, 0.240622, 0.595764},
		{"snnTorch", 16384, 0.713816, 2.364412},
	}
}
