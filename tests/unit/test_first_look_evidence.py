"""Issue 13's evidence that needs no watching and no py-spy: the kernel's view of peers, CPU against age,
a zombie's exit status, the ports a tree names, findings never first, healthy only on positive evidence."""

from __future__ import annotations

from diagnose_cases import T0, proc, series

from triage_tui.collect.announced_ports import from_cmdline, from_environ, from_logs, named_ports
from triage_tui.diagnose.hypotheses import evaluate
from triage_tui.diagnose.observations import observe_snapshots
from triage_tui.diagnose.thresholds import Thresholds
from triage_tui.model.diagnosis import Observation
from triage_tui.model.snapshot import (
    LogLine,
    LogTail,
    PortProbe,
    PortReport,
    ProcessInfo,
    Snapshot,
    TargetMemory,
)

TH = Thresholds(idle_after_s=4.0, silent_after_s=10.0)


def ids(history) -> dict[str, list]:
    out: dict[str, list] = {}
    for o in observe_snapshots(history, TH):
        out.setdefault(o.id, []).append(o)
    return out


def _ranks(odd_wchan: str = "pipe_read") -> list[ProcessInfo]:
    launcher = proc(10, 1, name="torchrun", wchan="do_wait")
    ranks = [proc(11 + i, 10, wchan="futex_wait_queue") for i in range(3)]
    ranks.append(proc(14, 10, wchan=odd_wchan))
    return [launcher, *ranks]


def test_the_odd_rank_is_named_from_the_kernels_view_on_the_first_look() -> None:
    found = ids(series([Snapshot(processes=tuple(_ranks()))]))
    odd = found["kernel-odd-rank"][0]
    assert odd.pids == (14,) and "pipe_read" in odd.text and "futex_wait_queue" in odd.text
    assert "kernel-odd-rank" not in ids(series([Snapshot(processes=tuple(_ranks("futex_wait_queue")))]))
    top = next(h for h in evaluate(observe_snapshots(series([Snapshot(processes=tuple(_ranks()))] * 6, 2.0), TH))
               if h.id == "wait-for-missing-rank")
    assert "PID 14" in top.title


def test_helpers_are_not_peers() -> None:
    tracker = proc(15, 10, wchan="pipe_read",
                   cmdline=("python3", "-c", "from multiprocessing.resource_tracker import main;main(7)"))
    rows = [*_ranks("futex_wait_queue"), tracker]
    assert "kernel-odd-rank" not in ids(series([Snapshot(processes=tuple(rows))]))


def test_first_look_says_cpu_against_age_and_the_logs_last_write() -> None:
    p = proc(7, 1, cpu_time=0.4, start_time=T0 - 42 * 60, wchan="futex_wait_queue")
    log = LogTail(path="/l", source="--log", lines=(LogLine("started", T0),), seconds_since_last_byte=2400.0,
                  last_byte_at=T0 - 2400.0)
    found = ids(series([Snapshot(processes=(p,), logs=(log,))]))
    texts = [o.text for o in found["first-look"]]
    assert any("0.4 s of CPU in 42 min" in t and "futex_wait_queue" in t for t in texts), texts
    assert any("last written 40 min" in t for t in texts), texts
    assert "log-silent" in found  # silent since before triage: stated at once


def test_a_zombies_exit_signal_is_evidence() -> None:
    dead = proc(8, 1, state="Z", exit_status=9)
    found = ids(series([Snapshot(processes=(proc(1, 0), dead))]))
    assert "killed by signal 9, SIGKILL" in found["zombie"][0].text
    assert "worker-sigkilled" in found
    exited = ids(series([Snapshot(processes=(proc(1, 0), proc(9, 1, state="Z", exit_status=3 << 8)))]))
    assert "exit code 3" in exited["zombie"][0].text


def test_ports_named_by_the_command_line_environment_and_log() -> None:
    p = ProcessInfo(pid=5, ppid=1, name="python3", cmdline=(
        "python3", "-m", "sglang.launch_server", "--port", "8000", "--dist-init-addr=127.0.0.1:5000",
        "--init_method", "tcp://localhost:29500", "--other", "10.0.0.9:7000"))
    found = {(n.port, n.role) for n in from_cmdline(p)}
    assert {(8000, "http"), (5000, "store"), (29500, "store")} <= found
    assert not any(n.port == 7000 for n in from_cmdline(p))  # another host's address is never probed
    assert [(n.port, n.role) for n in from_cmdline(ProcessInfo(pid=6, ppid=1, name="x", cmdline=("x", "--port=9001")))] \
        == [(9001, "http")]
    assert from_environ(5, {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29400"})[0].port == 29400
    assert from_environ(5, {"MASTER_ADDR": "10.1.2.3", "MASTER_PORT": "29400"}) == []
    tail = LogTail(path="/l", source="stderr of PID 5",
                   lines=(LogLine("INFO:     Uvicorn running on http://127.0.0.1:8765 (Press CTRL+C to quit)", T0),))
    assert [n.port for n in from_logs([tail])] == [8765]
    both = named_ports([p], {5: {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "8000"}}, [])
    assert next(n for n in both if n.port == 8000).role == "store"  # a store port is never sent a request


def _memory_illusion(processes: int) -> TargetMemory:
    return TargetMemory(processes=processes, rss_sum_bytes=14 << 20, pss_sum_bytes=4 << 20, pss_covered=processes)


def test_a_single_process_never_yields_the_rss_illusion_and_findings_never_rank_first() -> None:
    from triage_tui.model.snapshot import MemoryReport

    one = ids(series([Snapshot(processes=(proc(1),), memory=MemoryReport(target=_memory_illusion(1)))]))
    assert "rss-illusion" not in one
    several = observe_snapshots(series([Snapshot(processes=(proc(1), proc(2, 1), proc(3, 1)),
                                                 memory=MemoryReport(target=_memory_illusion(3)))]), TH)
    assert "rss-illusion" in {o.id for o in several}
    ranked = list(evaluate(several))  # the engine is the only sorter: every face shows its order
    assert ranked[0].kind == "cause"
    assert next(h for h in ranked if h.id == "rss-illusion").kind == "finding"


def _obs(*names: str) -> list[Observation]:
    return [Observation(id=n, text=f"observed {n}", source="test", at=0.0) for n in names]


def test_healthy_needs_an_answered_request_or_progress_seen() -> None:
    def status(*names: str) -> str:
        return next(h for h in evaluate(_obs(*names)) if h.id == "healthy").status

    assert status("log-active", "all-alive", "port-accepting") == "unlikely"
    assert status("port-answering", "port-accepting", "all-alive") == "likely"
    assert status("progress-seen", "log-active", "all-alive") == "likely"
    assert status("port-not-answering", "all-alive", "log-active") == "ruled out"


def test_a_wedged_server_port_reads_as_not_answering() -> None:
    wedged = PortReport(probes=(PortProbe(8000, "127.0.0.1", "no answer", "accepts connections but does not answer",
                                          origin="--port 8000 in PID 5's command line"),))
    found = ids(series([Snapshot(processes=(proc(5),), ports=wedged)]))
    assert "port-not-answering" in found and "port-accepting" not in found
    assert "--port 8000" in found["port-not-answering"][0].text
