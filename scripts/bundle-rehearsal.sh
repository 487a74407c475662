#!/usr/bin/env bash
# The CPU rehearsal of the GPU bundle: unpacks bin/fits-bundle.tar.xz into a temporary folder and runs its
# run.sh there with Go removed from PATH, on XLA CPU at small sizes, then checks that every stage wrote its
# JSON and exited 0. The temporary folder is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
archive="${1:-bin/fits-bundle.tar.xz}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$archive"

# PATH without any folder that holds a go command.
nogo=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -n "$d" && ! -x "$d/go" ]] && nogo="${nogo:+$nogo:}$d"
done
if PATH="$nogo" command -v go >/dev/null; then
  echo "bundle-rehearsal: go still on PATH" >&2
  exit 1
fi

env -u GOROOT -u GOPATH -u GOTOOLCHAIN PATH="$nogo" "$tmp/fits-bundle/run.sh" "$tmp/results" --backend=xla:cpu --small

status=0
for f in run selftest kernel on-64 shd-epoch; do
  if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/results/$f.json" 2>/dev/null; then
    echo "bundle-rehearsal: $f.json missing or not JSON" >&2
    status=1
  fi
done
python3 - "$tmp/results/run.json" <<'PY' || status=1
import json, sys
run = json.load(open(sys.argv[1]))
bad = [s for s in run["stages"] if s.get("status") != 0]
for s in bad:
    print(f"bundle-rehearsal: stage {s['stage']} ended with {s}", file=sys.stderr)
print("bundle-rehearsal: " + ", ".join(f"{s['stage']} {s['seconds']} s" for s in run["stages"]))
sys.exit(1 if bad or not run["stages"] else 0)
PY
[[ $status == 0 ]] && echo "bundle-rehearsal: ok"
exit $status
