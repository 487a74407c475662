# JupyterLab + GoNB: set-up, the lab, headless notebooks and the real-browser test.
# Included by the top Makefile (which exports PATH with $(go env GOPATH)/bin, GOTOOLCHAIN,
# GOEXPERIMENT=simd and GOMLX_NO_AUTO_INSTALL=1).

VENV_PY := .venv/bin/python

.PHONY: jupyter-setup lab notebooks notebooks-check notebooks-strip e2e

# Idempotent: GoNB/gopls/goimports from tools/go.mod, .venv from requirements.txt, the GoNB kernel,
# Debian chromium and playwright-core for the browser test.
jupyter-setup:
	@bash scripts/setup-jupyter.sh

# JupyterLab on localhost with the GoNB kernel, on copies of the notebooks in .lab/notebooks (the tracked
# notebooks stay clean), without the news prompt; prints the URL (LAB_PORT, LAB_IP, JUPYTER_TOKEN).
lab: jupyter-setup
	@bash scripts/lab.sh

# Execute every notebook headless into notebooks/.executed/; fails on any cell error or on a committed
# notebook that carries outputs. FITS_QUICK=1 lets notebooks shrink expensive cells (the results notebooks
# then read the CI subset of the quick runs). The runs the results notebooks read are trained first
# (reproduce-runs, mk/reproduce.mk), with progress in the terminal; finished runs are skipped.
notebooks: jupyter-setup reproduce-runs
	@$(REPRODUCE_ENV) $(VENV_PY) scripts/run_notebooks.py

# Check only that the committed notebooks are clean nbformat 4 with the GoNB kernelspec.
notebooks-check:
	@$(VENV_PY) scripts/run_notebooks.py --check-only

# Remove outputs, execution counts and the kernel's language_info details from the notebooks in place
# (before committing): a notebook saved from a lab strips back to its committed bytes.
notebooks-strip:
	@$(VENV_PY) scripts/run_notebooks.py --strip

# Real browser: JupyterLab + Debian chromium run notebooks 01, 02, 03, 03b and 04, drag the sliders of their
# panels and compare the drawn curves with the library (tests/e2e/expect), in the lab and in exported HTML
# (scripts/offline_html.py: MathJax inlined, checked to render with the network cut).
# Screenshots go to test-output/e2e/.
e2e: jupyter-setup
	@node tests/e2e/run.js
