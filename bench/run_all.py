"""Every benchmark, one after another, in one run on one machine; prints one Markdown report.

    bash bench/run.sh            # installs the peers, then runs this
    python3 bench/run_all.py [--quick] [--only overhead,startup,refresh,waits,app,stacks,ssh]

--quick shortens windows and repeats (a smoke run, not figures to quote). The report states the
machine; BENCHMARKS.md holds the last full run and the command that produced it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import REPO, machine_line  # noqa: E402

SECTIONS = ("overhead", "startup", "refresh", "waits", "app", "stacks", "ssh")


def _script(name: str, *args: str) -> str:
    """Run a stand-alone bench script and return what it printed."""
    out = subprocess.run([sys.executable, os.path.join(HERE, name), *args], capture_output=True, text=True,
                         cwd=REPO, env={**os.environ, "PYTHONPATH": REPO})
    text = out.stdout.strip()
    if out.returncode != 0:
        text += f"\n\n(failed with exit code {out.returncode}: {out.stderr.strip()[-500:]})"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short windows and few repeats (smoke run)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections to run")
    args = parser.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    repeats = 1 if args.quick else 3
    print("# triage benchmarks\n")
    print(f"- Machine: {machine_line()}")
    print(f"- Run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; command: `bash bench/run.sh"
          f"{' --quick' if args.quick else ''}`\n")
    if "overhead" in only:
        import overhead

        for interval, changing in ((1.0, 0.0), (2.0, 0.0), (1.0, 0.1)):
            print(f"## Overhead while watching (1,000 extra processes, {changing:.0%} changing, {interval:g} s refresh, "
                  "200x50 tmux pane)\n")
            results, conditions = overhead.run(repeats=repeats, window_s=8.0 if args.quick else 20.0,
                                               interval_s=interval, changing=changing)
            print(conditions + "\n")
            print(overhead.table(results, interval) + "\n")
    if "startup" in only:
        import startup

        print("## Start-up: command to first full frame\n")
        print(startup.table(startup.run(repeats=2 if args.quick else 5)) + "\n")
    if "refresh" in only:
        import refresh

        print("## One refresh against size\n")
        print(refresh.table(refresh.run(repeats=3 if args.quick else 7)) + "\n")
        print("smaps_rollup on a budget (10 ms per tick, 1,000 processes plus one mapping 2 GiB):\n")
        print(refresh.smaps_table(refresh.measure_smaps_budget(2 if args.quick else 5)) + "\n")
    if "waits" in only:
        print("## The wait-for graph at 1,000 processes\n")
        os.environ["BENCH_REPEATS"] = "3" if args.quick else "7"
        print(_script("waits.py") + "\n")
    if "app" in only:
        print("## The app: UI-thread time of one refresh\n")
        print("```\n" + _script("app_refresh.py") + "\n```\n")
    if "stacks" in only:
        print("## Stack capture: 8 workers in parallel against one after another\n")
        print("```\n" + _script("bench_stacks.py", "--repeats", "2" if args.quick else "5") + "\n```\n")
    if "ssh" in only:
        print("## Remote: one refresh over loopback SSH\n")
        print("```\n" + _script("bench_ssh.py", "--refreshes", "5" if args.quick else "20") + "\n```\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
