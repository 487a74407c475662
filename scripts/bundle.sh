#!/usr/bin/env bash
# Builds the GPU-node bundle: bin/fits-bundle.tar.xz (at most 50 MB), one folder fits-bundle/ holding
#   fits          the fits binary built here (GOEXPERIMENT=simd, cgo)
#   lib/          the shared libraries it links that are not part of glibc (HDF5 and what HDF5 links),
#                 copied from this machine; run.sh puts them on LD_LIBRARY_PATH
#   run.sh        the check: selftest, the kernel table, the Open Neuromorphic shape, one SHD-format epoch,
#                 JSON into a given folder, within 8 minutes (see its header)
#   README.txt    how to run it
# The target machine needs Linux x86-64 with a glibc at least as new as this machine's, and for CUDA the
# JAX CUDA plugin installed by pip (jax-cuda13-pjrt, jax-cuda13-plugin[with-cuda]); no Go, no network.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${BUNDLE_OUT:-bin/fits-bundle.tar.xz}"
limit=$((50 * 1000 * 1000))
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dir="$stage/fits-bundle"
mkdir -p "$dir/lib"

echo "bundle: building fits"
go build -buildvcs=auto -ldflags=-w -o "$dir/fits" ./cmd/fits # -w: no DWARF (smaller); same build cache as make build

# The libraries ldd resolves, except glibc's own (present on every Linux machine, and tied to its kernel).
glibc='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl)\.so'
ldd "$dir/fits" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
  if [[ ! "$name" =~ $glibc ]]; then
    cp -L "$path" "$dir/lib/$name"
  fi
done

cp bundle/run.sh "$dir/run.sh"
chmod +x "$dir/run.sh" "$dir/fits"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cat >"$dir/README.txt" <<TXT
FiTS toolkit: the fits binary (commit $commit) and the GPU check, for a Linux x86-64 machine without Go or
network. On a node where JAX and its CUDA plugin are pip-installed (jax-cuda13-pjrt), with that python on
PATH (or --python=PATH):

  ./run.sh RESULTS_DIR              # selftest, kernel table, Open Neuromorphic n = 4096 and 16384, SHD epoch
  ./run.sh RESULTS_DIR --backend=xla:cpu --small   # the CPU rehearsal (needs the XLA CPU plugin)

Every result is JSON in RESULTS_DIR (run.json lists the stages); it stops within 8 minutes.
./fits help lists the commands; ./fits selftest checks the engines on this machine's backend.
The libraries in lib/ are HDF5's and its dependencies, from the build machine.
TXT

mkdir -p "$(dirname "$out")"
tmp="$out.tmp"
tar -C "$stage" -cf - fits-bundle | xz -T0 -3 >"$tmp"
size=$(stat -c %s "$tmp")
if (( size > limit )); then
  rm -f "$tmp"
  echo "bundle: $size bytes, above the limit of $limit" >&2
  exit 1
fi
mv "$tmp" "$out"
echo "bundle: $out ($((size / 1000 / 1000)) MB): fits, $(ls "$dir/lib" | wc -l) libraries, run.sh"
