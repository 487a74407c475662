#!/usr/bin/env bash
# Starts JupyterLab from the project venv with the GoNB kernel, on localhost, and prints the URL of the
# first notebook. Stop it with Ctrl-C.
#
# The lab works on copies: notebooks/*.ipynb are copied once into .lab/notebooks/ (git ignores .lab/), and
# JupyterLab opens those, so running a notebook there never writes outputs into the tracked notebooks, and
# its figures go to .lab/figures/. A copy is kept across labs with your edits and outputs; delete it to get
# the tracked version again (the lab says which tracked notebooks changed since their copy). FITS_ROOT
# points the copies at this checkout (its packages, runs/ and bin/).
#
# JupyterLab's defaults are overridden by scripts/lab-settings/overrides.json: no news prompt, no update
# check.
#   LAB_PORT  port (default: the first free port from 8888)
#   LAB_IP    address to listen on (default 127.0.0.1; a container would use 0.0.0.0)
#   JUPYTER_TOKEN  access token (default: a random one)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x .venv/bin/jupyter ]] || { echo "lab: .venv is missing; run 'make setup' first" >&2; exit 1; }
export GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd
GOBIN="$(go env GOBIN)"
[[ -n "$GOBIN" ]] || GOBIN="$(go env GOPATH)/bin"
export PATH="$GOBIN:$PATH" GOMLX_NO_AUTO_INSTALL=1
ip="${LAB_IP:-127.0.0.1}"
port="${LAB_PORT:-$(.venv/bin/python - <<'PY'
import socket
for p in range(8888, 8988):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            continue
        print(p)
        break
PY
)}"
token="${JUPYTER_TOKEN:-$(.venv/bin/python -c 'import secrets; print(secrets.token_hex(16))')}"
host="$ip"; [[ "$ip" == "0.0.0.0" ]] && host="localhost"
work=.lab
mkdir -p "$work/notebooks"
cp -p notebooks/setup.sh "$work/notebooks/setup.sh"
for nb in notebooks/*.ipynb; do
  copy="$work/notebooks/$(basename "$nb")"
  if [[ ! -f "$copy" ]]; then
    cp -p "$nb" "$copy"
  elif [[ "$nb" -nt "$copy" ]] && ! cmp -s "$nb" "$copy"; then
    echo "lab: $nb changed since its copy $copy was made; delete the copy to work on the new version"
  fi
done
export FITS_ROOT="$PWD"
echo "JupyterLab with the GoNB kernel, on copies of the notebooks in $work/notebooks (the tracked ones stay clean):"
echo "  http://$host:$port/lab/tree/notebooks/01_target_frequency.ipynb?token=$token"
extra=()
[[ $(id -u) -eq 0 ]] && extra+=(--allow-root)
exec .venv/bin/jupyter lab --no-browser --ip="$ip" --port="$port" --ServerApp.port_retries=0 \
  --IdentityProvider.token="$token" --ServerApp.root_dir="$PWD/$work" \
  --LabApp.app_settings_dir="$PWD/scripts/lab-settings" \
  --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate --LabApp.news_url=None \
  --LabApp.extension_manager=readonly "${extra[@]}"
