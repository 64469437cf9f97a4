#!/usr/bin/env bash
# Install what parbench needs on Debian 12 / Ubuntu 24.04 (as root), only what
# is missing. CUDA is optional: the toolkit at /usr/local/cuda is used when present.
#   ci/deps.sh --check   install nothing: exit 1 with one line naming what is missing
#                        (the GPU gate's runner, whose image holds them; no root there)
set -euo pipefail
case "${1:-}" in
  ""|--check) ;;
  -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "deps.sh: unknown option $1 (--check, or none)" >&2; exit 2 ;;
esac
pkgs=(cmake ninja-build g++ pkg-config git python3 python3-venv python3-pip python3-matplotlib python3-numpy python3-scipy python3-yaml python3-jsonschema python3-hypothesis python3-psycopg2 postgresql chromium
      clang-format flake8
      libbenchmark-tools valgrind
      libbenchmark-dev libgtest-dev libopenblas-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ "${1:-}" == --check ]]; then
  if ((${#missing[@]})); then
    echo "parbench: missing ${missing[*]} (install them with ci/deps.sh as root, in the runner's image)" >&2
    exit 1
  fi
  echo "parbench: all build dependencies present"
  exit 0
fi
if ((${#missing[@]})); then
  echo "parbench: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "parbench: all build dependencies present"
fi
