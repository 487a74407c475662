#!/usr/bin/env bash
# Creates .venv-peers (PyTorch on the CPU and snnTorch, exactly as pinned in peers/requirements.txt) in
# the repository root. Idempotent: a venv whose stamp matches the requirements file is left alone.
# PEERS_PYTHON chooses the interpreter (default python3; CPython 3.11 or newer, Linux x86_64).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv-peers"
req="$root/peers/requirements.txt"
stamp="$venv/.requirements.sha256"
python=${PEERS_PYTHON:-python3}

want=$(sha256sum "$req" | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && "$venv/bin/python" -c 'import torch, snntorch' 2>/dev/null; then
	echo "peers-setup: .venv-peers is up to date"
	exit 0
fi

if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
	echo "peers-setup: $python is $("$python" --version 2>&1); torch 2.15.0 needs Python 3.11 or newer (set PEERS_PYTHON)" >&2
	exit 1
fi
if [[ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]]; then
	echo "peers-setup: the pinned wheels are for Linux x86_64, this is $(uname -s)/$(uname -m)" >&2
	exit 1
fi

if [[ ! -x "$venv/bin/python" ]]; then
	echo "peers-setup: creating .venv-peers with $("$python" --version 2>&1)"
	"$python" -m venv "$venv"
fi
rm -f "$stamp"
echo "peers-setup: installing peers/requirements.txt (about 2.4 GB of wheels on the first run)"
# --no-deps: the file is the complete pinned list (see its header for what is left out and why).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req"
"$venv/bin/python" - <<'PY'
import torch, snntorch
x = torch.ones(3, requires_grad=True)
(2 * x).sum().backward()
assert x.grad.tolist() == [2.0, 2.0, 2.0]
print(f"peers-setup: torch {torch.__version__} (CUDA available: {torch.cuda.is_available()}), snntorch {snntorch.__version__}")
PY
echo "$want" > "$stamp"
