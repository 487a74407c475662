# The Python peers of the benchmark (peers/): PyTorch timestep loop, torch.compile and snnTorch.
# Included by the top Makefile (which exports GOTOOLCHAIN, GOEXPERIMENT=simd and GOMLX_NO_AUTO_INSTALL=1).

PEERS_PY := .venv-peers/bin/python
# peers-bench: cells W:M, timed iterations, threads, Open Neuromorphic sizes n (empty: none).
PEERS_CELLS ?= 128:2
PEERS_ITERS ?= 5
PEERS_THREADS ?= 2
PEERS_ON_N ?=

.PHONY: peers-setup peers-check peers-bench

# Idempotent: the pinned virtualenv .venv-peers from peers/requirements.txt.
peers-setup:
	@bash peers/setup.sh

# The Python neuron against `fits simulate --engine=reference` (float64, spike for spike), the golden neurons
# of the released semantics included; then the golden files internal/golden/official/*.json regenerated into
# a temporary folder and compared with the committed ones (1e-12 relative). Fails on a mismatch.
# Regenerate them with `.venv-peers/bin/python peers/official_golden.py`. Last, runs of fits exported with
# `fits export --format=released` must evaluate in the peer as in fits eval (peers/check_released_export.sh).
peers-check: peers-setup build
	$(PEERS_PY) peers/check_oracle.py --fits=$(FITS)
	$(PEERS_PY) peers/official_golden.py --check=internal/golden/official
	bash peers/check_released_export.sh $(FITS)

# One JSON object on stdout: forward+backward medians of the peers on the given cells.
peers-bench: peers-setup
	$(PEERS_PY) peers/bench.py --cells=$(PEERS_CELLS) --iters=$(PEERS_ITERS) --threads=$(PEERS_THREADS) --on-n=$(PEERS_ON_N)
