package paper

// Labels of the paper's tables and figures, exactly as the paper numbers them (the appendix restarts the
// numbering with an "A." prefix).
const (
	Table1   = "Table 1"    // performance on SHD, SHD* and SSC, with baselines
	Table2   = "Table 2"    // performance on GSC, with baselines
	Table3   = "Table 3"    // factorized ablation on SSC across hidden sizes
	Table4   = "Table 4"    // theoretical energy on SSC at W = 512
	Table5   = "Table 5"    // CT-to-DT alignment
	TableA1  = "Table A.1"  // dataset-specific neuron constants
	TableA2  = "Table A.2"  // selected learning rate and dropout
	TableA3  = "Table A.3"  // runtime of the temporal FiTS update (kernel)
	TableA4  = "Table A.4"  // training time
	TableA5  = "Table A.5"  // factorized ablation on GSC
	TableA6  = "Table A.6"  // factorized ablation on SHD*
	TableA7  = "Table A.7"  // TS cascade order sweep M = 0..5 on SSC
	TableA8  = "Table A.8"  // inference-time target-frequency perturbation on SSC
	TableA9  = "Table A.9"  // sMNIST
	TableA10 = "Table A.10" // DVS Gesture 128
	Figure1  = "Figure 1"   // the TS module (diagram)
	Figure2  = "Figure 2"   // layer-dependent organisation learned on GSC (Δf*, Δτ)
	Figure3  = "Figure 3"   // CT vs DT target frequency of a model trained on SHD
	FigureA1 = "Figure A.1" // zero-input trajectories (Appendix A.2)
	FigureA2 = "Figure A.2" // learned β and λ distributions on GSC
)

// Labels returns every table and figure label of the paper: the tables in order (Table 1 to Table A.10),
// then the figures (Figure 1 to Figure A.2).
func Labels() []string {
	return []string{Table1, Table2, Table3, Table4, Table5, TableA1, TableA2, TableA3, TableA4, TableA5,
		TableA6, TableA7, TableA8, TableA9, TableA10, Figure1, Figure2, Figure3, FigureA1, FigureA2}
}
