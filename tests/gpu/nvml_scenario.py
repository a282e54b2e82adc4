"""Runs the GPU collector in its own process, against whichever libnvidia-ml.so.1 the loader finds.

The binding caches the loaded library for the life of the process, so every fake-driver
scenario needs a fresh interpreter. Commands on stdin, one JSON line answered on stdout each:
  poll  -> {"report": <GpuReport as JSON data>, "functions_not_found": [...]}
  idle  -> {"idle": true|false}  (waits until no NVML call is blocked)
Options: --timeout S (per call), --budget S (per poll), --with-smi (nvidia-smi fallback),
--init-retry S (how soon a failed nvmlInit is retried).
"""

from __future__ import annotations

import argparse
import json
import sys

from triage_tui.collect.gpu import GpuCollector, local_gpu_collector
from triage_tui.model import to_data


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--with-smi", action="store_true")
    parser.add_argument("--init-retry", type=float, default=10.0)
    args = parser.parse_args()
    if args.with_smi:
        collector = local_gpu_collector(call_timeout_s=args.timeout, poll_budget_s=args.budget)
    else:
        collector = GpuCollector(call_timeout_s=args.timeout, poll_budget_s=args.budget,
                                 init_retry_s=args.init_retry)
    for line in sys.stdin:
        command = line.strip()
        if command == "poll":
            report = collector()
            answer = {"report": to_data(report), "functions_not_found": collector.functions_not_found}
        elif command == "idle":
            answer = {"idle": collector.calls.wait_idle(30.0)}
        else:
            return 0
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
