"""Minimal node-side collectors for agent mode, used only when core's LocalHost is not in the shipped build.

Replaces `ps -o pid,ppid,stat,rss,args --forest` and `free -b` with psutil, so that agent mode works (and
says it is degraded) before or without the full collectors. Every figure it cannot give is Unavailable
with the reason "minimal agent collectors".
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Sequence
from typing import Optional

import psutil

from ..model.snapshot import MemoryReport, ProcessInfo, Snapshot, SourceStatus, SystemMemory, Target, TargetRoot
from ..model.stacks import Frame, ProcessStacks, StackCapture, StackGroup, ThreadStack
from ..model.unavailable import Unavailable, unavailable_from_error
from .base import CollectOptions, StackOptions, TargetError

NOTE = "minimal agent collectors (core's LocalHost not in this build)"

class MinimalHost:
    name = "node"

    def resolve(self, specs: Sequence[str], port: Optional[int] = None) -> Target:
        roots: list[TargetRoot] = []
        for spec in specs:
            if spec.isdigit():
                if not psutil.pid_exists(int(spec)):
                    raise TargetError(f"no process with PID {spec}")
                roots.append(TargetRoot(int(spec), f"PID {spec}"))
            elif spec.startswith("name:"):
                try:
                    pattern = re.compile(spec[5:])
                except re.error as exc:
                    raise TargetError(f"bad regex in {spec!r}: {exc}") from None
                for p in psutil.process_iter(["pid", "cmdline"]):
                    if pattern.search(" ".join(p.info["cmdline"] or ())):
                        roots.append(TargetRoot(p.info["pid"], f"command line matches {spec[5:]!r}"))
            else:
                raise TargetError(f"{NOTE}: cannot resolve {spec!r}")
        if not roots:
            raise TargetError(f"nothing matches {' '.join(specs) or '(no target)'}")
        return Target(specs=tuple(specs), roots=tuple(roots))

    def collect(self, target: Target, options: CollectOptions) -> Snapshot:
        started = time.time()
        pids: list[int] = []
        for root in target.roots:
            try:
                proc = psutil.Process(root.pid)
                pids += [proc.pid] + [c.pid for c in proc.children(recursive=True)]
            except psutil.Error:
                continue
        processes = []
        for pid in dict.fromkeys(pids):
            try:
                p = psutil.Process(pid)
                with p.oneshot():
                    mem = p.memory_info()
                    processes.append(ProcessInfo(
                        pid=pid, ppid=p.ppid(), name=p.name(), cmdline=tuple(p.cmdline()),
                        state=p.status()[:1].upper(), threads=p.num_threads(), rss_bytes=mem.rss, vms_bytes=mem.vms,
                        pss_bytes=Unavailable(NOTE), uss_bytes=Unavailable(NOTE)))
            except psutil.Error as exc:
                processes.append(ProcessInfo(pid=pid, ppid=0, name="?", exited=True, error=unavailable_from_error(exc)))
        vm = psutil.virtual_memory()
        system = SystemMemory(total_bytes=vm.total, used_bytes=vm.used, free_bytes=vm.free, available_bytes=vm.available)
        return Snapshot(host=self.name, taken_at=started, interval_s=options.interval_s, target=target,
                        processes=tuple(processes), memory=MemoryReport(system=system),
                        sources=(SourceStatus("processes", "ok", (time.time() - started) * 1000, NOTE),))

    def capture_stacks(self, pids: Sequence[int], options: StackOptions) -> StackCapture:
        """`py-spy dump --json --pid PID` for each PID, grouped by identical stacks."""
        started = time.time()
        results = []
        for pid in pids:
            try:
                out = subprocess.run(["py-spy", "dump", "--json", "--pid", str(pid)], capture_output=True,
                                     text=True, timeout=options.timeout_s, check=True).stdout

                threads = tuple(
                    ThreadStack(pid=pid, tid=t.get("thread_id", 0), name=t.get("thread_name") or "",
                                status="idle" if t.get("idle") else "active",
                                frames=tuple(Frame(f.get("name", "?"), f.get("filename", ""), f.get("line", 0))
                                             for f in t.get("frames", [])))
                    for t in json.loads(out))
                results.append(ProcessStacks(pid=pid, threads=threads))
            except (OSError, subprocess.SubprocessError, ValueError) as exc:
                results.append(ProcessStacks(pid=pid, error=Unavailable(f"py-spy: {type(exc).__name__}: {exc}"[:300])))
        by_key: dict[str, list[ThreadStack]] = {}
        for ps in results:
            for t in ps.threads:
                by_key.setdefault(" <- ".join(f"{f.function}@{f.file}" for f in t.frames), []).append(t)
        groups = tuple(StackGroup(key=k, frames=ts[0].frames, members=tuple((t.pid, t.tid) for t in ts),
                                  pids=tuple(sorted({t.pid for t in ts}))) for k, ts in by_key.items())
        return StackCapture(taken_at=started, pids=tuple(pids), processes=tuple(results), groups=groups,
                            duration_ms=(time.time() - started) * 1000, notes=(NOTE,))

    def close(self) -> None:
        pass
