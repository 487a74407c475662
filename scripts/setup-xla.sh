#!/usr/bin/env bash
# Installs the XLA PJRT plugins that GoMLX's XLA backend loads, from pinned PyPI wheels, without GitHub:
#   - CPU: the lammps-jax-pjrt-cpu wheel (requirements-xla.txt, hash-checked), which carries XLA's CPU
#     PJRT plugin -> $PJRT_DIR/pjrt_c_api_cpu_plugin.so
#   - CUDA (only when an NVIDIA device is present, or FITS_INSTALL_CUDA=1): jax-cuda13-pjrt and the NVIDIA
#     libraries (requirements-xla-cuda.txt) into a venv; the plugin is copied to
#     $PJRT_DIR/pjrt_c_api_cuda_plugin.so and $PJRT_DIR/../nvidia links to the venv's nvidia/ folder.
# Idempotent: a stamp file records the installed wheel's hash, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PJRT_DIR="${FITS_PJRT_DIR:-$HOME/.local/lib/go-xla}"
CACHE=".cache/wheels"
PYTHON="${PYTHON:-python3}"
mkdir -p "$PJRT_DIR" "$CACHE"

# extract_so WHEEL MEMBER_SUFFIX DEST: copies the wheel member ending in MEMBER_SUFFIX to DEST atomically.
extract_so() {
  "$PYTHON" - "$1" "$2" "$3" <<'PY'
import os, shutil, sys, zipfile
wheel, suffix, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(suffix)]
    if len(names) != 1:
        sys.exit(f"{wheel}: expected one member ending in {suffix}, found {names}")
    tmp = dest + ".tmp"
    with z.open(names[0]) as src, open(tmp, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
PY
}

# --- CPU plugin ---------------------------------------------------------------------------------
cpu_hash=$(sed -n 's/.*--hash=sha256:\([0-9a-f]*\).*/\1/p' requirements-xla.txt | head -n1)
cpu_stamp="$PJRT_DIR/.fits-cpu-plugin.sha256"
if [[ -f "$PJRT_DIR/pjrt_c_api_cpu_plugin.so" && -f "$cpu_stamp" && "$(cat "$cpu_stamp")" == "$cpu_hash" ]]; then
  echo "setup-xla: CPU PJRT plugin already installed in $PJRT_DIR"
else
  echo "setup-xla: downloading the XLA CPU PJRT plugin wheel (about 63 MB) ..."
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    -r requirements-xla.txt -d "$CACHE"
  wheel=$(ls "$CACHE"/lammps_jax_pjrt_cpu-*.whl | head -n1)
  extract_so "$wheel" "/pjrt_c_api_cpu_plugin.so" "$PJRT_DIR/pjrt_c_api_cpu_plugin.so"
  echo "$cpu_hash" > "$cpu_stamp"
  echo "setup-xla: installed $PJRT_DIR/pjrt_c_api_cpu_plugin.so"
fi

# --- CUDA plugin (GPU machines only) ------------------------------------------------------------
if compgen -G "/dev/nvidia[0-9]*" >/dev/null || [[ "${FITS_INSTALL_CUDA:-0}" == "1" ]]; then
  cuda_venv="${FITS_CUDA_VENV:-$HOME/.local/lib/fits-cuda-venv}"
  cuda_stamp="$PJRT_DIR/.fits-cuda-plugin.req"
  want=$(sha256sum requirements-xla-cuda.txt | cut -d' ' -f1)
  if [[ -f "$PJRT_DIR/pjrt_c_api_cuda_plugin.so" && -f "$cuda_stamp" && "$(cat "$cuda_stamp")" == "$want" ]]; then
    echo "setup-xla: CUDA PJRT plugin already installed in $PJRT_DIR"
  elif [[ -f "$PJRT_DIR/pjrt_c_api_cuda_plugin.so" && ! -f "$cuda_stamp" ]]; then
    echo "setup-xla: using the CUDA PJRT plugin already present in $PJRT_DIR"
  else
    echo "setup-xla: installing the CUDA PJRT plugin and NVIDIA libraries (several GB) ..."
    "$PYTHON" -m venv "$cuda_venv"
    "$cuda_venv/bin/pip" install --quiet -r requirements-xla-cuda.txt
    site=$("$cuda_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    cp "$site/jax_plugins/xla_cuda13/xla_cuda_plugin.so" "$PJRT_DIR/pjrt_c_api_cuda_plugin.so.tmp"
    mv "$PJRT_DIR/pjrt_c_api_cuda_plugin.so.tmp" "$PJRT_DIR/pjrt_c_api_cuda_plugin.so"
    # The plugin looks for the NVIDIA libraries in ../nvidia relative to itself.
    ln -sfn "$site/nvidia" "$(dirname "$PJRT_DIR")/nvidia"
    echo "$want" > "$cuda_stamp"
    echo "setup-xla: installed $PJRT_DIR/pjrt_c_api_cuda_plugin.so"
  fi
fi
