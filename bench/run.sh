#!/usr/bin/env bash
# One command for every benchmark: installs the peers (htop, btop from Debian; glances from PyPI into
# bench/.peers), then runs each benchmark and prints one table. Run from a fresh clone, as root.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[test]'
need=()
for t in htop btop tmux; do command -v $t >/dev/null 2>&1 || need+=($t); done
if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
[ -x bench/.peers/bin/glances ] || { python3 -m venv bench/.peers && bench/.peers/bin/pip install -q glances; }
cd bench
exec python3 run_all.py "$@"
