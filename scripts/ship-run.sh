#!/usr/bin/env bash
# Copies a run into the repository's shipped results (results/ID/seed-N): its result.json when it has finished,
# and its newest intact checkpoint (the .json, .bin and .sha256 of the highest checkpoint number, checked
# against its sums), nothing else (no lock file, no older checkpoints, no log with this machine's paths).
# A run still training can be shipped and shipped again later: the previous copy's checkpoint files are
# replaced; files in the destination that this script did not write are left alone and stop it.
#
# A run that departs from its recipe (trained with an option the released code lacks) goes to
# results/departures/ID-seed-N-DEPARTURE instead (ID with '/' as '-'), where no table counts it as the recipe.
#
# Usage: scripts/ship-run.sh RUN_DIR ID SEED [DEPARTURE]
#   e.g. scripts/ship-run.sh ~/runs/smnist-0 smnist/fsts-m1/w256 0
#        scripts/ship-run.sh ~/runs/s0-skip smnist/fsts-m1/w256 0 skip-nonfinite
set -euo pipefail
[[ $# -eq 3 || $# -eq 4 ]] || { echo "usage: $0 RUN_DIR ID SEED [DEPARTURE]" >&2; exit 2; }
run=$1 id=$2 seed=$3 departure=${4:-}
[[ -d $run ]] || { echo "ship-run: $run is not a folder" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ ]] || { echo "ship-run: seed $seed is not a number" >&2; exit 2; }
[[ $id =~ ^[a-z0-9-]+(/[a-z0-9-]+)*$ ]] || { echo "ship-run: $id is not an experiment id (fits experiments)" >&2; exit 2; }
[[ -z $departure || $departure =~ ^[a-z0-9-]+$ ]] || { echo "ship-run: departure $departure is not a name of lower-case letters, digits and '-'" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
rel=$id/seed-$seed
[[ -z $departure ]] || rel=departures/${id//\//-}-seed-$seed-$departure
dest=$root/results/$rel

newest=$(cd "$run" && ls checkpoint-n*-step-*.sha256 2>/dev/null | sort | tail -1)
[[ -n $newest ]] || { echo "ship-run: $run holds no signed checkpoint" >&2; exit 2; }
base=${newest%.sha256}
(cd "$run" && sha256sum --quiet -c "$newest") || { echo "ship-run: $base does not match its sums" >&2; exit 2; }

mkdir -p "$dest"
for f in "$dest"/* "$dest"/.[!.]*; do
  [[ -e $f ]] || continue
  case $(basename "$f") in
    result.json | checkpoint-n*-step-*.json | checkpoint-n*-step-*.bin | checkpoint-n*-step-*.sha256) ;;
    *) echo "ship-run: $f was not written by this script; move it away first" >&2; exit 2 ;;
  esac
done
rm -f "$dest"/checkpoint-n*-step-*.{json,bin,sha256}
cp "$run/$base.json" "$run/$base.bin" "$run/$newest" "$dest/"
if [[ -f $run/result.json ]]; then
  cp "$run/result.json" "$dest/"
else
  rm -f "$dest/result.json"
fi
echo "shipped $base$( [[ -f $dest/result.json ]] && echo ' and result.json') into results/$rel"
