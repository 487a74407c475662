// Package experiment describes every cell of the paper's result tables and figures as data, and
// aggregates finished runs into tables shaped like the paper's.
//
// An Experiment is one trained configuration of the paper: a dataset and its protocol, a neuron model, a
// TS cascade order M, a hidden width W, the learning rate and dropout of Table A.2, 100 epochs, batch 128
// and the seeds the paper averages over (1–5; 20 for Figure 2). One experiment feeds every table that
// prints its number: the SSC run of FS + TS (M = 2) at W = 512, for instance, is a cell of Table 3, a row
// of Table 1 (SSC, FiTS), of Table 4 (energy), of Table A.4 (training time) and of Table A.7. IDs are
// stable, path-safe and use '/' as separator:
//
//	ssc/<model>/w<W>       SSC ablation (Table 3, Table A.7 for M = 3..5), official validation split
//	gsc/<model>/w<W>       GSC ablation (Table A.5), official validation split
//	shd-val/<model>/w<W>   SHD* ablation (Table A.6), 20 % of the training set held out for validation
//	shd-best/<model>/w128  SHD best-test rows of Table 1
//	gsc-org/fsts-m1/w512   the learned-organisation runs on GSC (Figure 2, Figure A.2), 20 seeds
//	smnist/fsts-m1/w256    sMNIST (Table A.9)
//	dvs/<model>            DVS Gesture 128, convolutional network, final-epoch test accuracy (Table A.10)
//	fidelity/<variant>     beyond the paper: ssc/fsts-m2/w512 with one option of the paper's text flipped
//	                       from the released code's semantics (label Fidelity, notebook 14; fidelity.go)
//
// where <model> is lif, adaptlif, fs-frozen, fs or fsts-m<M>. Each experiment has two recipes: Full, the
// paper's, for the real datasets; and Quick, a stand-in small enough for a CPU (see quick.go for the
// whole quick plan in one place, and Experiment.QuickNote for what each stand-in is).
//
// Runs live in RunDir(root, id, seed) = root/<id>/seed-<seed>, each holding the result.json that
// fits/train writes. Aggregate reads them and builds a TableResult: rows = models, columns = widths (or
// the paper's single accuracy column), the paper's value beside the mean ± sample standard deviation
// (n − 1 in the denominator) over the finished seeds, the difference, the parameter counts and how many
// seeds finished. TableResult renders itself as Markdown and CSV; WriteTable writes both.
//
// The quick stand-ins' run times: docs/performance-notes.md.
package experiment
