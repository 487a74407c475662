package nb

// playgroundSteps are the "What to look for" steps of notebook 03b's playground (see lookfor_test.go).
func playgroundSteps(notebook string) []lookFor {
	return nil
}
