# FiTS toolkit. The two commands a newcomer runs: `make demo` and `make test`.
SHELL := /bin/bash
# The Go toolchain the module is built and tested with: a machine's own go (any version from 1.21) fetches it
# from the module proxy on first use.
export GOTOOLCHAIN := go1.27.3
GOBIN := $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) go env GOPATH)/bin
export PATH := $(GOBIN):$(PATH)
export GOMLX_NO_AUTO_INSTALL := 1
# Go's SIMD package (simd/archsimd): the fused engine's kernel (fits/fused) runs 8 neurons per AVX2
# instruction. Without it the same kernel runs scalar code with identical results.
export GOEXPERIMENT := simd

FITS := bin/fits

.PHONY: all setup build demo test espeak-digits check fmt-check tidy-check vet links gotest fuzz figures clean help
all: build

help:
	@echo "make setup      install Go modules, the XLA plugin, JupyterLab + GoNB (idempotent)"
	@echo "make demo       theory figures, paper-vs-ours tables, the five-model ablation trained (minutes)"
	@echo "make test       gofmt, go vet, go test, fuzz targets briefly, the bundle rehearsal, notebooks headless, browser test, Slurm sweep"
	@echo "make lab        JupyterLab with the GoNB kernel on localhost"
	@echo "make notebooks  execute every notebook headless"
	@echo "make e2e        real-browser test of the panels of notebooks 01-04 and 03b"
	@echo "make figures    regenerate figures/ (SVG + PNG)"
	@echo "make reproduce  the paper's tables and figures: runs, every notebook, test-output/report/index.html"
	@echo "make slurm-test a fits sweep as a Slurm array job on a single-node cluster started here (root)"
	@echo "make bundle     bin/fits-bundle.tar.xz: fits and the GPU check script for a node without Go (docs/setup.md)"
	@echo "make peers-check  the PyTorch/snnTorch peers against the float64 oracle (peers-setup, peers-bench: see docs/peers.md)"

# setup is cheap when already done (every step checks first).
setup:
	@bash scripts/setup.sh

# -buildvcs=auto: the binary records the commit it was built from (result.json names it) also where GOFLAGS
# turns that off.
build:
	@mkdir -p bin
	go build -buildvcs=auto -o $(FITS) ./cmd/fits

figures: build
	$(FITS) figures --out=figures

demo: setup build
	$(FITS) figures --out=figures
	$(FITS) demo

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@echo "gofmt: ok"

# go.mod and go.sum must be what `go mod tidy` makes of them (prints the difference otherwise).
tidy-check:
	@go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy'"; exit 1; }
	@echo "go mod tidy: ok"

vet:
	go vet ./...

# FITS_REQUIRE_XLA=1 turns a missing XLA plugin into a failure instead of a skip: after setup it must be there.
gotest:
	FITS_REQUIRE_XLA=1 go test -count=1 -timeout=30m ./...
	GOEXPERIMENT= FITS_REQUIRE_XLA=1 go test -count=1 ./fits/fused
	GOEXPERIMENT= FITS_REQUIRE_XLA=1 go test -count=1 -run 'TestGoldenSteps/.*/fused' ./fits/step

# Every fuzz target briefly (FUZZTIME, default 5s each).
fuzz:
	@bash scripts/fuzz.sh

check: fmt-check tidy-check vet links gotest

# Every relative link of README.md and docs/*.md names a file that exists (and a heading that exists).
links:
	@python3 scripts/check_links.py

test: setup check fuzz bundle-rehearsal notebooks e2e slurm-test

# Spoken digits synthesised here with espeak-ng (not committed), both front ends converted to the cache.
# FITS_DATA chooses the data root (default: the user cache folder, fits/datasets).
espeak-digits: build
	$(FITS) data convert --dataset=espeak

clean:
	rm -rf bin test-output notebooks/.executed

-include mk/*.mk
