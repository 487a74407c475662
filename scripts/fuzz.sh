#!/usr/bin/env bash
# Runs every Go fuzz target of the module briefly (FUZZTIME each, default 5s): the binary parsers (IDX,
# AEDAT, WAV, the dataset cache) must survive arbitrary input without panicking.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-5s}"
n=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while IFS=: read -r file _ decl; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")
  pkg="./$(dirname "$file")"
  echo "fuzz: $pkg $name ($fuzztime)"
  go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg" >"$log" 2>&1 || { cat "$log"; exit 1; }
  n=$((n + 1))
done < <(git grep -n '^func Fuzz' -- '*_test.go')
echo "fuzz: $n targets passed"
