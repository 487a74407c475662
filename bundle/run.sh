#!/usr/bin/env bash
# Runs the FiTS GPU check from an unpacked bundle (made by `make bundle`), on a Linux x86-64 machine without
# Go or network, and writes every result as JSON into OUT_DIR (a new or empty folder):
#
#   selftest.json       fits selftest: every engine against the float64 oracle and the golden steps
#   shd-epoch.json      fits bench --suite=training: one epoch of the SHD recipe (FiTS M = 1, W = 128) on a
#                       full-size SHD-format stand-in (fits data synth --full), written to a temporary folder
#                       and removed after
#   kernel-W.json       fits bench --suite=kernel: the paper's kernel-runtime table (Table A.3), one file per
#                       width W = 64, 128, 256, 512 (M = 0-2, engines chunked and loop)
#   on-4096.json        fits bench --suite=open-neuromorphic at n = 4096 (Linear + LIF/FiTS, batch 16, T = 500)
#   on-16384.json       the same at n = 16384
#   run.json            what ran: each stage's exit status, seconds and whether it hit its time limit
#   *.log               each stage's stderr (a benchmark's log names every cell's median as it finishes)
#
# It stops by itself: each stage has a time limit, and all of them together stay within --budget seconds
# (default 470, under 8 minutes); a stage that hits its limit is recorded and the next one runs. Stages run
# in order of importance, so a slow machine loses the last ones. On an NVIDIA H200 the whole check took
# about 450 s (every XLA compilation of a kernel cell takes 6-13 s there; results/gpu/).
#
# usage: run.sh OUT_DIR [--backend=CONFIG] [--python=PATH] [--budget=SECONDS] [--small]
#   --backend   GoMLX backend (default: automatic: the CUDA PJRT plugin of JAX's pip installation, found
#               through the python on PATH, when an NVIDIA GPU is present; else XLA CPU; else pure Go)
#   --python    the Python whose site-packages hold JAX's CUDA plugin (sets FITS_PYTHON)
#   --small     tiny sizes (the CPU rehearsal in CI): a few seconds per stage
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n 's/^# \{0,1\}//; /^usage:/,/^  --small/p' "$0" >&2; }
[[ $# -ge 1 && "$1" != --* ]] || { usage; exit 2; }
out=$1
shift
backend="" budget=470 small=0
for arg in "$@"; do
  case "$arg" in
    --backend=*) backend=${arg#--backend=} ;;
    --python=*) export FITS_PYTHON=${arg#--python=} ;;
    --budget=*) budget=${arg#--budget=} ;;
    --small) small=1 ;;
    *) echo "run.sh: unknown argument $arg" >&2; usage; exit 2 ;;
  esac
done
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "run.sh: --budget=$budget is not a number of seconds" >&2; exit 2; }
if [[ -e "$out" && ( ! -d "$out" || -n "$(ls -A "$out")" ) ]]; then
  echo "run.sh: $out exists and is not an empty folder (results are never written over)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2

# The bundle's libraries (HDF5 and what it links, from the build machine) serve only where this machine has
# none of the same name: a folder of links to the missing ones goes on LD_LIBRARY_PATH.
work=$(mktemp -d "${TMPDIR:-/tmp}/fits-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lib"
known=$(ldconfig -p 2>/dev/null || true)
for lib in "$here"/lib/*; do
  name=$(basename "$lib")
  grep -qF "$name (" <<<"$known" || ln -s "$lib" "$work/lib/$name"
done
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GOMLX_NO_AUTO_INSTALL=1
fits="$here/fits"
bflag=()
[[ -n "$backend" ]] && bflag=("--backend=$backend")
start=$SECONDS
deadline=$((start + budget))
stages=()

# stage NAME LIMIT CMD...: runs CMD with stdout to OUT/NAME.json and stderr to OUT/NAME.log, for at most
# LIMIT seconds and never past the deadline, and records how it ended.
stage() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - SECONDS))
  (( limit > left )) && limit=$left
  if (( limit < 5 )); then
    stages+=("{\"stage\":\"$name\",\"status\":null,\"seconds\":0,\"timed_out\":false,\"skipped\":\"no time left\"}")
    echo "run.sh: $name skipped: no time left" >&2
    return
  fi
  echo "run.sh: $name (at most ${limit} s)" >&2
  local t0=$SECONDS status
  timeout --kill-after=10 "$limit" "$@" >"$out/$name.json" 2>"$out/$name.log"
  status=$?
  local timed_out=false
  (( status == 124 || status == 137 )) && timed_out=true
  [[ -s "$out/$name.json" ]] || rm -f "$out/$name.json"
  stages+=("{\"stage\":\"$name\",\"status\":$status,\"seconds\":$((SECONDS - t0)),\"timed_out\":$timed_out}")
  echo "run.sh: $name: exit status $status after $((SECONDS - t0)) s" >&2
}

if (( small )); then
  stage selftest 120 "$fits" selftest "${bflag[@]}" --engine=fused --json
else
  stage selftest 100 "$fits" selftest "${bflag[@]}" --json
fi

# One SHD-format epoch on a stand-in written to the temporary folder (removed at the end: this script made it).
data="$work/data"
if (( small )); then
  stage shd-synth 60 "$fits" data synth --format=shd --out="$data/shd" --samples=8
else
  stage shd-synth 40 "$fits" data synth --format=shd --out="$data/shd" --full
fi
rm -f "$out/shd-synth.json" # data synth prints no JSON
# The SHD cell of Table A.4 (FiTS M = 1, W = 128), its catalog recipe, with the backend's default engine.
if [[ -f "$data/shd/shd_train.h5" ]]; then
  stage shd-epoch 75 "$fits" bench --suite=training "${bflag[@]}" --datasets=shd --m=1 --width=128 \
    --data-dir="$data" --stand-in --epochs=1 --json
fi

if (( small )); then
  stage kernel 60 "$fits" bench --suite=kernel "${bflag[@]}" --engine=chunked --width=8 --m=0 --time=10 --batch=2 \
    --inputs=4 --classes=0 --iters=1 --warmup=0 --kernel-iters=0 --json
  stage on-64 60 "$fits" bench --suite=open-neuromorphic "${bflag[@]}" --engine=chunked --neurons=64 --m=0 --time=10 \
    --lif=false --iters=1 --warmup=0 --kernel-iters=0 --json
else
  for w in 64 128 256 512; do
    stage "kernel-$w" 80 "$fits" bench --suite=kernel "${bflag[@]}" --engine=chunked,loop --width=$w --iters=3 \
      --kernel-iters=0 --json
  done
  stage on-4096 60 "$fits" bench --suite=open-neuromorphic "${bflag[@]}" --engine=chunked,loop --neurons=4096 \
    --iters=3 --kernel-iters=0 --json
  stage on-16384 75 "$fits" bench --suite=open-neuromorphic "${bflag[@]}" --engine=chunked,loop --neurons=16384 \
    --iters=3 --kernel-iters=0 --json
fi

{
  printf '{"bundle":"fits","small":%s,"backend":"%s","budget_seconds":%d,"seconds":%d,"stages":[' \
    "$([[ $small == 1 ]] && echo true || echo false)" "${backend:-automatic}" "$budget" "$((SECONDS - start))"
  (IFS=,; printf '%s' "${stages[*]}")
  printf ']}\n'
} >"$out/run.json"
echo "run.sh: results in $out ($((SECONDS - start)) s)" >&2
