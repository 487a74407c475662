#!/usr/bin/env bash
# Regenerates the committed released-layout fixtures fits/interop/testdata/released/o{0,1,2}: the PyTorch
# peer (peers/released_fixture.py, released semantics) trains a network of two hidden layers of 16
# neurons on the reduced synthetic task for M = 0, 1, 2 and for the baselines lif, adaptive_lif (the
# released LIFNeuron) and fs_frozen (learn_freq false), and writes each run folder as the released code
# does, with the test logits of its weights (expected.json), and bad/: checkpoints derived from o0 that
# fits import must refuse. Needs .venv-peers (make peers-setup) and Go.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# The toolchain of the Makefile (which exports these when it runs this script).
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3} GOEXPERIMENT=${GOEXPERIMENT:-simd} GOMLX_NO_AUTO_INSTALL=1
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
go run ./peers/synthdata --out="$data" --small
out=fits/interop/testdata/released
rm -rf "$out"
.venv-peers/bin/python peers/released_fixture.py make --data="$data" --out="$out" --orders=0,1,2 \
	--baselines=lif,adaptive_lif,fs_frozen --width=16 --epochs=25 --lr=0.03 --dropout=0.1 --min-margin=2e-5 --bad
du -sh "$out"
