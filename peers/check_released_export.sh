#!/usr/bin/env bash
# The reverse of fits/interop's fixture test: fits trains a small network on the reduced synthetic task
# for M = 0, 1, 2, `fits export --format=released` writes it in the released layout, and the PyTorch peer
# (released semantics) loads it with strict state-dict names and must give fits eval's test accuracy
# exactly and its loss within 1e-4. Usage: peers/check_released_export.sh [bin/fits]
set -euo pipefail
fits=${1:-bin/fits}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3} GOEXPERIMENT=${GOEXPERIMENT:-simd} GOMLX_NO_AUTO_INSTALL=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go run ./peers/synthdata --out="$work/data" --small
for m in 0 1 2; do
	model=fsts
	[[ $m == 0 ]] && model=fs
	"$fits" train --dataset=synthetic --small --model=$model --m=$m --width=16 --epochs=3 --lr=0.03 \
		--out="$work/run$m" >/dev/null
	"$fits" export --format=released --from="$work/run$m" --out="$work/exp$m" >/dev/null
	"$fits" eval --checkpoint="$work/run$m" --json >"$work/eval$m.json" 2>/dev/null
	.venv-peers/bin/python peers/released_fixture.py check --run="$work/exp$m" --data="$work/data" \
		--expect="$work/eval$m.json"
done
