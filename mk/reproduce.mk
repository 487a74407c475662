# The paper's tables and figures end to end: the runs, every notebook executed headless, one HTML report.
# Included by the top Makefile (which exports PATH with $(go env GOPATH)/bin, GOTOOLCHAIN,
# GOEXPERIMENT=simd and GOMLX_NO_AUTO_INSTALL=1).
#
#   make reproduce                  quick mode: stand-ins on data this machine has, trained into runs/quick
#   FITS_QUICK=1 make reproduce     quick mode restricted to the CI subset (nb.CISubset: 56 of the 82 runs)
#   FITS_MODE=full make reproduce   full mode: reads the finished runs of the user's sweeps on the real datasets
#                                   under FITS_RUNS (default runs/full); it trains nothing unless FITS_TRAIN=1
#
# Variables: FITS_MODE (quick | full), FITS_RUNS (the runs' root), WORKERS (runs trained at once, default 2),
# FITS_TRAIN=1 (full mode: train the missing runs on this machine), REPORT_DIR (default test-output/report).

FITS_MODE ?= quick
FITS_RUNS ?= runs/$(FITS_MODE)
WORKERS ?= 2
REPORT_DIR ?= test-output/report
REPRODUCE_ENV = FITS_MODE=$(FITS_MODE) FITS_RUNS=$(abspath $(FITS_RUNS))
# In quick mode every notebook's figures (05's included, which would otherwise replace the committed ones
# with its run's) go to notebooks/.executed/figures-quick unless FITS_FIGURES_DIR says otherwise.
QUICK_FIGURES_ENV = $(if $(filter quick,$(FITS_MODE)),FITS_FIGURES_DIR=$(or $(FITS_FIGURES_DIR),$(abspath notebooks/.executed/figures-quick)))

.PHONY: reproduce reproduce-runs reproduce-report

# Trains (quick) or lists (full) the runs every results notebook reads; finished runs are never retrained.
reproduce-runs: build
	$(FITS) reproduce --mode=$(FITS_MODE) --root=$(FITS_RUNS) --workers=$(WORKERS) $(if $(filter 1,$(FITS_TRAIN)),--train)

# The runs, then every notebook (a failing notebook fails the target after the report is written).
reproduce: jupyter-setup reproduce-runs
	@status=0; $(REPRODUCE_ENV) $(QUICK_FIGURES_ENV) $(VENV_PY) scripts/run_notebooks.py || status=$$?; \
	$(REPRODUCE_ENV) $(VENV_PY) scripts/report.py --out $(REPORT_DIR) || status=$$?; \
	exit $$status

# The report alone, from the notebooks executed last (notebooks/.executed).
reproduce-report:
	$(REPRODUCE_ENV) $(VENV_PY) scripts/report.py --out $(REPORT_DIR)
