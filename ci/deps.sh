#!/usr/bin/env bash
# Install what parbench needs on Debian 12 / Ubuntu 24.04 (as root), only what
# is missing. CUDA is optional: the toolkit at /usr/local/cuda is used when present.
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config git python3 python3-venv python3-pip python3-matplotlib python3-numpy python3-scipy python3-yaml python3-jsonschema python3-hypothesis python3-psycopg2 postgresql chromium
      clang-format flake8
      libbenchmark-tools valgrind
      libbenchmark-dev libgtest-dev libopenblas-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "parbench: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "parbench: all build dependencies present"
fi
