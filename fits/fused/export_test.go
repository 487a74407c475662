package fused

// SetHistBudget sets the bound of the backward vector kernels' buffer for the recomputed state, bytes, and
// returns the previous bound. A bound below one group's state makes them run one group at a time.
func SetHistBudget(bytes int) int {
	prev := histBudget
	histBudget = bytes
	return prev
}

// SetAssemblyKernels switches the assembly kernels of order-1 layers (forwardM1x16, backwardM1x16) on or
// off, and returns the previous setting; off, the Go kernels run in their place.
func SetAssemblyKernels(on bool) bool {
	prev := assemblyKernels
	assemblyKernels = on
	return prev
}
