#!/usr/bin/env bash
# Idempotent set-up of the notebook side of the toolkit, from the package registries only:
#   1. GoNB, goimports and gopls, built from the versions pinned in tools/go.mod (tool directives);
#   2. the project virtualenv .venv with JupyterLab and the headless runner (requirements.txt, pinned);
#   3. the GoNB Jupyter kernel, with GOTOOLCHAIN=go1.27.3, GOEXPERIMENT=simd, GOMLX_NO_AUTO_INSTALL=1 and a
#      PATH that finds go, goimports, gopls;
#   4. the browser test's dependencies: Debian's chromium and playwright-core (tests/e2e, npm ci), and the
#      MathJax that exported HTML inlines (npm package mathjax, same folder).
# Every step checks first, so a second run does no work and changes nothing.
# FITS_SKIP_BROWSER=1 skips step 4 (for machines that only run notebooks headless).
set -euo pipefail
cd "$(dirname "$0")/.."

export GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd GOMLX_NO_AUTO_INSTALL=1
GOBIN="$(go env GOBIN)"
[[ -n "$GOBIN" ]] || GOBIN="$(go env GOPATH)/bin"
GOROOT_BIN="$(go env GOROOT)/bin"
export PATH="$GOBIN:$GOROOT_BIN:$PATH"
PYTHON="${PYTHON:-python3}"

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"

# tool_version BINARY MODULE: prints the version of MODULE that BINARY was built from (empty if none).
tool_version() {
  [[ -x "$1" ]] || return 0
  go version -m "$1" 2>/dev/null | awk -v m="$2" '$1 == "mod" && $2 == m { print $3 }'
}

# wanted_version MODULE: the version of MODULE pinned in tools/go.mod.
wanted_version() {
  awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2 } $1 == "require" && $2 == m { print $3 }' tools/go.mod | head -n1
}

# --- 1. Go tools ------------------------------------------------------------------------------
tools_ok=1
for pair in "gonb github.com/janpfeifer/gonb" "gopls golang.org/x/tools/gopls" "goimports golang.org/x/tools"; do
  read -r bin mod <<<"$pair"
  have="$(tool_version "$GOBIN/$bin" "$mod")"
  want="$(wanted_version "$mod")"
  if [[ -z "$want" || "$have" != "$want" ]]; then
    tools_ok=0
  fi
done
if (( tools_ok )); then
  echo "setup-jupyter: gonb, gopls, goimports already installed in $GOBIN"
else
  echo "setup-jupyter: building gonb, gopls, goimports from tools/go.mod (about a minute) ..."
  (cd tools && GOBIN="$GOBIN" go install tool)
fi

# --- 2. Python virtualenv ---------------------------------------------------------------------
req_hash="$(sha256sum requirements.txt | cut -d' ' -f1)"
stamp=".venv/.fits-requirements.sha256"
if [[ -x .venv/bin/python && -f "$stamp" && "$(cat "$stamp")" == "$req_hash" ]]; then
  echo "setup-jupyter: .venv already matches requirements.txt"
else
  echo "setup-jupyter: installing JupyterLab and the notebook runner into .venv ..."
  [[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --require-virtualenv -r requirements.txt
  echo "$req_hash" >"$stamp"
fi

# --- 3. GoNB kernel ---------------------------------------------------------------------------
data_dir="${JUPYTER_DATA_DIR:-$HOME/.local/share/jupyter}"
kernel_json="$data_dir/kernels/gonb/kernel.json"
kernel_path="$GOBIN:$GOROOT_BIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# write_kernel_env CHECK_ONLY: adds the env entries to kernel.json; with "check" only reports a mismatch.
write_kernel_env() {
  .venv/bin/python - "$kernel_json" "$GOBIN/gonb" "$kernel_path" "$1" <<'PY'
import json, sys
path, gonb, kpath, mode = sys.argv[1:]
try:
    with open(path) as f:
        spec = json.load(f)
except (OSError, ValueError):
    sys.exit(1)
want_env = {"GOTOOLCHAIN": "go1.27.3", "GOEXPERIMENT": "simd", "GOMLX_NO_AUTO_INSTALL": "1", "PATH": kpath}
ok = spec.get("argv", [None])[0] == gonb and all(spec.get("env", {}).get(k) == v for k, v in want_env.items())
if mode == "check":
    sys.exit(0 if ok else 1)
spec.setdefault("env", {}).update(want_env)
with open(path, "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
PY
}
if write_kernel_env check; then
  echo "setup-jupyter: GoNB kernel already registered ($kernel_json)"
else
  echo "setup-jupyter: registering the GoNB kernel ..."
  gonb --install --logtostderr=false >/dev/null
  write_kernel_env write
  echo "setup-jupyter: kernel spec written to $kernel_json"
fi

# --- 4. Browser test dependencies -------------------------------------------------------------
if [[ "${FITS_SKIP_BROWSER:-0}" == "1" ]]; then
  echo "setup-jupyter: FITS_SKIP_BROWSER=1, skipping chromium and playwright-core"
  exit 0
fi
apt_install() {
  if ! apt-cache show "$@" >/dev/null 2>&1; then
    $SUDO apt-get update -qq
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if [[ -x /usr/bin/chromium ]]; then
  echo "setup-jupyter: chromium already installed"
else
  echo "setup-jupyter: apt-get install chromium (Debian package; no browser download) ..."
  apt_install chromium
fi
if ! command -v npm >/dev/null; then
  echo "setup-jupyter: apt-get install nodejs npm ..."
  apt_install nodejs npm
fi
# tests/e2e/package.json pins playwright-core (the browser test) and mathjax (inlined into exported HTML by
# scripts/offline_html.py, so that math renders offline): npm ci when either is missing or at another version.
npm_ok="$(.venv/bin/python - <<'PY'
import json, os
want = json.load(open("tests/e2e/package.json"))["dependencies"]
ok = True
for name, version in want.items():
    p = os.path.join("tests/e2e/node_modules", name, "package.json")
    ok = ok and os.path.isfile(p) and json.load(open(p))["version"] == version
print("yes" if ok else "no")
PY
)"
if [[ "$npm_ok" == "yes" ]]; then
  echo "setup-jupyter: tests/e2e npm packages already installed"
else
  echo "setup-jupyter: npm ci (tests/e2e: playwright-core, mathjax) ..."
  (cd tests/e2e && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
