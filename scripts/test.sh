#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian machine (as root), then run the whole suite.
# This is the README's test command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v ps >/dev/null 2>&1 && command -v free >/dev/null 2>&1 || need+=(procps)   # agentless SSH mode
command -v ss >/dev/null 2>&1 || need+=(iproute2)                                   # agentless SSH mode
command -v unshare >/dev/null 2>&1 || need+=(util-linux)                            # GPU PID-namespace test, job nodes
[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] || need+=(slurm-wlm)              # the real local Slurm test
[ -x /usr/sbin/munged ] || need+=(munge)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

python3 -m pip install -q -e '.[test]'
# torch.distributed (gloo on CPU), DDP and DataLoader for the live report scenarios: pinned, the CPU build
python3 -c 'import torch' 2>/dev/null || python3 -m pip install -q torch==2.13.0
# The layering contract and the type check (pyproject.toml [tool.importlinter], [tool.mypy]): a violation
# fails the run before any test.
lint-imports --no-cache
python3 -m mypy
exec python3 -m pytest "$@"
