"""The snapshot model: JSON round-trip, Unavailable as data, schema tolerance, raw apart from derived."""

from __future__ import annotations

import dataclasses
import json

from triage_tui.model import SCHEMA_VERSION, Snapshot, Unavailable, from_json, to_data, to_json
from triage_tui.model.diagnosis import Diagnosis, Evidence, Hypothesis
from triage_tui.model.moment import Moment
from triage_tui.model.snapshot import (
    GpuDevice,
    GpuReport,
    LogLine,
    LogTail,
    MemoryReport,
    ProcessInfo,
    SystemMemory,
)
from triage_tui.model.stacks import Frame, StackCapture, StackGroup


def _sample() -> Snapshot:
    return Snapshot(
        host="node7",
        taken_at=1700000000.5,
        processes=(
            ProcessInfo(pid=10, ppid=1, name="launcher", cmdline=("python3", "-m", "x"), state="S",
                        cpu_time_s=28.0, rss_bytes=927 << 20, pss_bytes=Unavailable("permission denied", "run as root")),
        ),
        memory=MemoryReport(system=SystemMemory(total_bytes=449 << 30, available_bytes=415 << 30)),
        logs=(LogTail(path="/tmp/x.log", lines=(LogLine("Loading 100%", 1.0),)),),
        gpus=GpuReport(source="nvml", devices=(GpuDevice(index=0, memory_used_bytes=76017 << 20),)),
    )


def _moment() -> Moment:
    return Moment(
        _sample(),
        Diagnosis(hypotheses=(Hypothesis("oom", "Out of memory", "ruled out", 0.0, for_=(), against=("415 GiB available",),
                                         evidence=(Evidence("memory-ample", -0.3, "415 GiB available"),), cap=0.0),),
                  idle_since={10: 1699999900.0}),
        StackCapture(taken_at=2.0, pids=(10,), groups=(StackGroup("k", (Frame("wait", "x.py", 3),), ((10, 11),), (10,)),)),
    )


def test_round_trip_is_identity() -> None:
    snap = _sample()
    assert from_json(Snapshot, to_json(snap)) == snap
    moment = _moment()
    assert from_json(Moment, to_json(moment)) == moment  # PID keys of idle_since come back as ints


def test_a_snapshot_holds_only_what_the_collectors_saw() -> None:
    names = {f.name for f in dataclasses.fields(Snapshot)}
    assert not names & {"observations", "hypotheses", "stacks"}


def test_unavailable_is_explicit_in_json_never_zero() -> None:
    data = to_data(_sample())
    pss = data["processes"][0]["pss_bytes"]
    assert pss == {"unavailable": "permission denied", "hint": "run as root"}
    assert data["schema_version"] == SCHEMA_VERSION


def test_hypothesis_evidence_is_named_for_in_json() -> None:
    data = to_data(_moment())
    hyp = data["diagnosis"]["hypotheses"][0]
    assert "for" in hyp and "for_" not in hyp
    assert hyp["against"] == ["415 GiB available"]
    assert hyp["evidence"] == [{"observation": "memory-ample", "weight": -0.3, "text": "415 GiB available"}]


def test_unknown_keys_from_a_newer_writer_are_ignored() -> None:
    data = to_data(_sample())
    data["processes"][0]["a_field_from_the_future"] = 1
    data["something_new"] = {"x": 1}
    snap = from_json(Snapshot, json.dumps(data))
    assert snap.processes[0].pid == 10


def test_unavailable_is_falsy_and_prints_its_reason() -> None:
    u = Unavailable("permission denied", "run as root")
    assert not u
    assert str(u) == "unavailable: permission denied (hint: run as root)"
