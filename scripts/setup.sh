#!/usr/bin/env bash
# One-command, idempotent set-up of everything the toolkit needs, from the package registries only:
# Go modules, the XLA PJRT plugin(s), and the JupyterLab + GoNB side (kernel, virtualenv, browser test deps).
# Safe to run repeatedly; every step skips work already done.
set -euo pipefail
cd "$(dirname "$0")/.."

export GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd GOMLX_NO_AUTO_INSTALL=1
# Any go from 1.21 on fetches the toolchain GOTOOLCHAIN names from the module proxy on first use.
command -v go >/dev/null || { echo "setup: Go is not installed (need Go >= 1.21; it fetches go1.27.3)"; exit 1; }
command -v python3 >/dev/null || { echo "setup: python3 is not installed"; exit 1; }

# System packages from Debian: libhdf5-dev (SHD/SSC readers, cgo), espeak-ng (spoken digits made on the
# machine), pkg-config, binutils (GNU objdump: the tests disassemble the x86-64 vector kernels; on other
# architectures the x86-64 cross binutils). Installed only when missing; needs root (or sudo).
objdump_pkg=binutils
[[ $(dpkg --print-architecture 2>/dev/null || echo amd64) == amd64 ]] || objdump_pkg=binutils-x86-64-linux-gnu
need=()
for pkg in libhdf5-dev pkg-config espeak-ng "$objdump_pkg"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if (( ${#need[@]} )); then
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  echo "setup: apt-get install ${need[*]} ..."
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "setup: Go modules ..."
go mod download

bash scripts/setup-xla.sh

if [[ -f scripts/setup-jupyter.sh ]]; then
  bash scripts/setup-jupyter.sh
fi
echo "setup: done"
