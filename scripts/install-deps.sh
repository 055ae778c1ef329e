#!/usr/bin/env bash
# Installs the Debian packages headroom builds with, only those that are missing.
# Uses sudo when not root. Safe to run repeatedly.
set -euo pipefail
packages=(build-essential cmake libboost-dev libeigen3-dev libyaml-cpp-dev catch2 libcli11-dev
          libfmt-dev nlohmann-json3-dev libbenchmark-dev python3
          hipcc)  # compiles the HIP build of kernels/headroom-calibrate (gfx90a/gfx940) without a GPU
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
