"""LocalHost: the Host protocol over /proc, with and without the optional collaborators."""

from __future__ import annotations

import dataclasses
from typing import Any

from triage_tui.host.base import CollectOptions, StackOptions
from triage_tui.host.local import LocalHost
from triage_tui.model.snapshot import GpuDevice, GpuHolding, GpuProcess, GpuReport, LogTail


def test_resolve_collect_and_close(incident_tree: dict[str, Any]) -> None:
    host = LocalHost()
    try:
        target = host.resolve([f"name:{incident_tree['tag']}"])
        snapshot = host.collect(target, CollectOptions(port=incident_tree["port"]))
        assert host.name and snapshot.host == host.name
        assert {p.pid for p in snapshot.processes} >= {incident_tree["launcher"], *incident_tree["workers"]}
        assert any(s.name == "processes" and s.status == "ok" for s in snapshot.sources)
        capture = host.capture_stacks([incident_tree["launcher"]], StackOptions(timeout_s=5))
        assert capture.pids == (incident_tree["launcher"],)
    finally:
        host.close()
    assert not host._collector.smaps._thread.is_alive()


def test_collaborators_feed_the_snapshot_and_the_auto_pick(incident_tree: dict[str, Any]) -> None:
    worker = incident_tree["workers"][1]
    report = GpuReport(source="nvml", devices=(GpuDevice(index=0, processes=(GpuProcess(pid=worker + 10**6,
                                                                                        local_pid=worker),)),))

    def join(rows, gpus):  # type: ignore[no-untyped-def]
        return tuple(dataclasses.replace(r, gpus=(GpuHolding(0),)) if r.pid == worker else r for r in rows)

    def logs(rows, options):  # type: ignore[no-untyped-def]
        return (LogTail(path=f"/fake/{len(rows)}"),)

    host = LocalHost(gpus=lambda: report, join_gpus=join, logs=logs)
    try:
        target = host.resolve([])
        assert target.auto_picked and target.roots[0].pid == worker and "GPU" in target.roots[0].reason
        snapshot = host.collect(target)
    finally:
        host.close()
    assert snapshot.gpus is report
    assert snapshot.process(worker).gpus == (GpuHolding(0),)  # type: ignore[union-attr]
    assert snapshot.logs[0].path == f"/fake/{len(snapshot.processes)}"
