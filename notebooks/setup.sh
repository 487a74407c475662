#!/usr/bin/env bash
# Notebook set-up. The first code cell of every notebook runs it as
#
#     !*bash ${GONB_DIR}/setup.sh
#
# GoNB runs `!*` commands inside the temporary Go module that holds the notebook's program, and sets
# GONB_DIR to the notebook's folder. This script makes the toolkit's packages importable there without
# any download: the module proxy does not serve this project, so GoNB's automatic `go get` cannot fetch
# it. Instead the temporary module requires the project at a placeholder version and replaces it with
# this checkout, requires every module the project requires (GoNB for gonbui, gonum/plot, ...) at the
# versions the project pins, and copies the project's go.sum so every checksum is already known. Safe to
# run again.
#
# The same first cell then sets `%goflags "-ldflags=-s -w -linkmode=internal"` (no symbol table or DWARF,
# and Go's own linker instead of the C toolchain's: the link of each cell's program, 30 MB with XLA's
# bindings, is the larger part of a cell's time) and `%noautoget` (no `go get` before each cell; nothing is
# missing). A cell that only draws or shows a figure took 5.6–7.2 s with GoNB's defaults and 2.7–3.2 s with
# the first two flags (two CPU cores busy with training); docs/notebooks.md has the idle-core numbers.
# FITS_ROOT overrides the repository root (the browser test runs a copy of a notebook from another folder).
set -euo pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
root="${FITS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
mod=github.com/fits-snn/fits
[[ -f go.mod ]] || { echo "setup.sh: run it from a GoNB cell (!*bash \${GONB_DIR}/setup.sh)" >&2; exit 1; }

# version MODULE: the version of MODULE required by the project's go.mod.
version() { awk -v m="$1" '($1 == m || ($1 == "require" && $2 == m)) { for (i = 1; i <= NF; i++) if ($i ~ /^v[0-9]/) { print $i; exit } }' "$root/go.mod"; }

edits=(-require="$mod@v0.0.0-00010101000000-000000000000" -replace="$mod=$root")
for dep in github.com/janpfeifer/gonb gonum.org/v1/plot; do
  [[ -n "$(version "$dep")" ]] || { echo "setup.sh: $dep is not in $root/go.mod" >&2; exit 1; }
done
# Every module the project requires, at the project's version: the notebook module's build list is then
# complete, so cells build without GoNB's automatic `go get` (the first cell turns it off: %noautoget).
while read -r dep; do
  edits+=(-require="$dep")
done < <(awk '/^require \(/ { inside = 1; next } inside && /^\)/ { inside = 0; next }
  inside && $2 ~ /^v[0-9]/ { print $1 "@" $2 } /^require [^(]/ { print $2 "@" $3 }' "$root/go.mod")
go mod edit "${edits[@]}"
cat "$root/go.sum" >>go.sum
sort -u go.sum -o go.sum
echo "notebook module: $mod => $root (GOMLX_NO_AUTO_INSTALL=${GOMLX_NO_AUTO_INSTALL:-unset})"
