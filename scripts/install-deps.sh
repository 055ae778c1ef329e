#!/usr/bin/env bash
# Installs the Debian packages headroom builds with, only those that are missing, then the npm
# packages of web/ (ECharts for the HTML report, playwright-core) exactly as web/package-lock.json pins
# them. With --test, also Debian's chromium (the browser test of report.html, --png/--svg),
# clang-14 with its compiler-rt (libclang-rt-14-dev: the sanitizers of `make sanitize`, libFuzzer of
# `make fuzz`) and lld (the clang build's linker: a sanitizer test links in a quarter of GNU ld's
# time, cmake/sanitize.cmake).
# Uses sudo when not root. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(build-essential cmake ninja-build libboost-dev libeigen3-dev libyaml-cpp-dev catch2 libcli11-dev
          libfmt-dev nlohmann-json3-dev libbenchmark-dev python3
          zlib1g-dev  # gzip-compressed snapshots (.pickle.gz, .json.gz)
          libopenmpi-dev openmpi-bin  # `mpirun -n N headroom sweep` (CMake builds the MPI path when found)
          hipcc)  # compiles the HIP build of kernels/headroom-calibrate (gfx90a/gfx940) without a GPU
# node and npm: Debian's nodejs/npm unless a node is already installed (e.g. from NodeSource).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
if [[ "${1:-}" == "--test" ]]; then
  packages+=(chromium clang-14 libclang-rt-14-dev lld)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm ci only when web/node_modules is older than the lock file (it removes and reinstalls them all).
if [[ ! -f web/node_modules/.package-lock.json || web/package-lock.json -nt web/node_modules/.package-lock.json ]]; then
  echo "installing web/node_modules (npm ci)"
  (cd web && npm ci --no-audit --no-fund)
fi
