package fused

// SetHistBudget sets the bound of the backward vector kernels' buffer for the recomputed state, bytes, and
// returns the previous bound. A bound below one group's state makes them run one group at a time.
func SetHistBudget(bytes int) int {
	prev := histBudget
	histBudget = bytes
	return prev
}
