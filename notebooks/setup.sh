#!/usr/bin/env bash
# Notebook set-up. The first code cell of every notebook runs it as
#
#     !*bash ${GONB_DIR}/setup.sh
#
# GoNB runs `!*` commands inside the temporary Go module that holds the notebook's program, and sets
# GONB_DIR to the notebook's folder. This script makes the toolkit's packages importable there without
# any download: the module proxy does not serve this project, so GoNB's automatic `go get` cannot fetch
# it. Instead the temporary module requires the project at a placeholder version and replaces it with
# this checkout, requires GoNB (for gonbui) and gonum/plot at the versions the project pins, and copies
# the project's go.sum so every checksum is already known. Safe to run again. FITS_ROOT overrides the
# repository root (the browser test runs a copy of a notebook from another folder).
set -euo pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root="${FITS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
mod=github.com/fits-snn/fits
[[ -f go.mod ]] || { echo "setup.sh: run it from a GoNB cell (!*bash \${GONB_DIR}/setup.sh)" >&2; exit 1; }

# version MODULE: the version of MODULE required by the project's go.mod.
version() { awk -v m="$1" '($1 == m || ($1 == "require" && $2 == m)) { for (i = 1; i <= NF; i++) if ($i ~ /^v[0-9]/) { print $i; exit } }' "$root/go.mod"; }

edits=(-require="$mod@v0.0.0-00010101000000-000000000000" -replace="$mod=$root")
for dep in github.com/janpfeifer/gonb gonum.org/v1/plot; do
  v="$(version "$dep")"
  [[ -n "$v" ]] || { echo "setup.sh: $dep is not in $root/go.mod" >&2; exit 1; }
  edits+=(-require="$dep@$v")
done
go mod edit "${edits[@]}"
cat "$root/go.sum" >>go.sum
sort -u go.sum -o go.sum
echo "notebook module: $mod => $root (GOMLX_NO_AUTO_INSTALL=${GOMLX_NO_AUTO_INSTALL:-unset})"
