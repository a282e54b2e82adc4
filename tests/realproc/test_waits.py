"""The wait-for graph on real stuck programs: each test asserts the edge the collector must find."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from triage_tui.collect.proc_table import read_proc_table, read_text
from triage_tui.diagnose.engine import Diagnosis, DiagnosisEngine
from triage_tui.host.base import CollectOptions
from triage_tui.host.local import LocalHost
from triage_tui.model.snapshot import Snapshot
from triage_tui.collect.waits import EPOLLS, collect_waits
from triage_tui.model.waits import WAIT_KINDS, Wait
from triage_tui.parse.syscalls import parse_syscall

from . import wait_programs as programs
from .wait_programs import settle_in, started


def waits_of(pids: list[int]) -> dict[int, Wait]:
    """The main thread's wait of each PID (the collector reads the whole set in one refresh)."""
    waits, source = collect_waits(pids, read_proc_table())
    assert source.error is None, source.error
    assert all(w.kind in WAIT_KINDS for w in waits)
    return {w.pid: w for w in waits if w.tid == w.pid}


def test_reader_waits_on_the_live_writer_of_its_pipe() -> None:
    read_end, write_end = os.pipe()
    reader = subprocess.Popen([sys.executable, "-c", "import os, sys; os.read(int(sys.argv[1]), 1)", str(read_end)],
                              pass_fds=[read_end])
    os.close(read_end)
    try:
        settle_in([reader.pid], ["read"])
        got = waits_of([reader.pid])[reader.pid]
        assert got.kind == "pipe" and got.object.startswith("pipe:[")
        assert got.peer_pids == (os.getpid(),)  # this test holds the only write end
        assert got.peer_outside == (os.getpid(),)  # and is not part of the target given
        assert "write end held by PID" in got.detail
    finally:
        reader.kill()
        reader.wait()
        os.close(write_end)


def test_pipe_whose_writers_are_blocked_on_the_reader() -> None:
    with started(programs.PIPE_RING) as info:
        reader, writers = info["reader"], info["writers"]
        settle_in([reader, *writers], ["read"])
        settle_in([info["launcher"]], ["wait4"])
        got = waits_of([info["launcher"], reader, *writers])
        assert got[reader].kind == "pipe" and got[reader].peer_pids == tuple(sorted(writers))
        for w in writers:
            assert got[w].kind == "pipe" and got[w].peer_pids == (reader,)
        assert got[info["launcher"]].kind == "child" and got[info["launcher"]].peer_pids == (reader,)


def test_two_processes_each_reading_the_pipe_the_other_should_write() -> None:
    with started(programs.PIPE_CYCLE) as info:
        a, b = info["a"], info["b"]
        settle_in([a, b], ["read"])
        settle_in([info["launcher"]], ["clock_nanosleep", "nanosleep", "select", "pselect6"])
        got = waits_of([info["launcher"], a, b])
        assert got[a].peer_pids == (b,) and got[b].peer_pids == (a,)
        assert got[info["launcher"]].kind == "sleep"


def test_unix_socketpair_between_parent_and_child() -> None:
    with started(programs.SOCKETPAIR) as info:
        settle_in([info["child"]], ["recvfrom", "recvmsg", "read"])
        got = waits_of([info["parent"], info["child"]])[info["child"]]
        assert got.kind == "unix" and got.peer_pids == (info["parent"],)
        assert "peer socket:[" in got.detail


def test_tcp_client_on_a_listener_that_never_accepts() -> None:
    with started(programs.TCP_NOT_ACCEPTED) as info:
        settle_in([info["client"]], ["recvfrom", "recvmsg", "read"])
        got = waits_of([info["listener"], info["client"]])[info["client"]]
        assert got.kind == "tcp" and got.not_accepted
        assert got.address == f"127.0.0.1:{info['port']}"
        assert got.peer_pids == (info["listener"],)
        assert "never accepted" in got.detail


def test_tcp_client_on_an_accepted_connection_that_never_answers() -> None:
    with started(programs.TCP_NO_ANSWER) as info:
        settle_in([info["client"]], ["recvfrom", "recvmsg", "read"])
        settle_in([info["server"]], ["clock_nanosleep", "nanosleep", "select"])
        got = waits_of([info["launcher"], info["server"], info["client"]])[info["client"]]
        assert got.kind == "tcp" and not got.not_accepted
        assert got.address == f"127.0.0.1:{info['port']}" and got.socket_state == "ESTABLISHED"
        assert got.peer_pids == (info["server"],)


def test_wait4_on_a_stopped_child() -> None:
    with started(programs.WAIT_STOPPED) as info:
        settle_in([info["parent"]], ["wait4"])
        # the child stops itself right after the fork; poll until it has
        poll_until(lambda: read_proc_table().stats[info["child"]].state == "T", "the child to stop itself")
        got = waits_of([info["parent"], info["child"]])
        assert got[info["parent"]].kind == "child" and got[info["parent"]].peer_pids == (info["child"],)
        assert "stopped" in got[info["parent"]].detail
        assert got[info["child"]].state == "T"


def test_multiprocessing_barrier_with_one_party_missing() -> None:
    with started(programs.BARRIER) as info:
        parties = info["parties"]
        settle_in(parties, ["futex"])
        got = waits_of([info["launcher"], *parties])
        for pid in parties:
            wait = got[pid]
            other = next(p for p in parties if p != pid)
            assert wait.kind == "futex" and wait.shared_key, wait
            assert other in wait.peer_pids and info["launcher"] in wait.peer_pids
            assert "/dev/shm" in wait.path or "sem." in wait.object
            assert f"also waiting on the same word: PID {other}" in wait.detail
        assert got[parties[0]].shared_key == got[parties[1]].shared_key


def test_epoll_loop_watching_a_socket() -> None:
    with started(programs.EPOLL_LOOP) as info:
        settle_in([info["child"]], sorted(EPOLLS))
        got = waits_of([info["parent"], info["child"]])[info["child"]]
        assert got.kind == "epoll" and got.peer_pids == (info["parent"],)
        assert "socket:[" in got.object


def test_an_eventfd_waits_on_the_other_process_holding_the_same_one() -> None:
    """eventfds all read "anon_inode:[eventfd]": fdinfo's eventfd-id says which fds are the same one."""
    with started(programs.EVENTFD) as info:
        settle_in([info["child"]], ["read"])
        got = waits_of([info["parent"], info["child"]])[info["child"]]
        assert got.kind == "eventfd"
        if "no eventfd-id" in got.detail:  # Linux < 5.15: said so, and no peer is guessed
            assert got.peer_pids == (), got
            return
        assert got.peer_pids == (info["parent"],), got
        assert f"fd {info['efd']}" in got.detail and f"fd {info['other']}" not in got.detail, got.detail


def test_a_process_that_exits_mid_read_is_skipped() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    waits, source = collect_waits([proc.pid, os.getpid()], read_proc_table())
    assert all(w.pid != proc.pid for w in waits)


def _diagnose(root: int) -> tuple[Snapshot, Diagnosis]:
    """One refresh of the tree below `root` through the local host and the engine, no stack capture."""
    host = LocalHost()
    try:
        snapshot = host.collect(host.resolve([str(root)]), CollectOptions())
    finally:
        host.close()
    return snapshot, DiagnosisEngine().update(snapshot)  # no stack capture: the waits alone


def test_engine_names_the_cross_process_cycle_a_deadlock_before_any_stack_capture() -> None:
    with started(programs.PIPE_CYCLE) as info:
        a, b = info["a"], info["b"]
        settle_in([a, b], ["read"])
        snapshot, diagnosis = _diagnose(info["launcher"])
        top = diagnosis.hypotheses[0]
        assert top.id == "deadlock", [(h.id, h.score) for h in diagnosis.hypotheses[:3]]
        assert f"PID {a}" in top.title and f"PID {b}" in top.title
        cycle = next(o for o in diagnosis.observations if o.id == "wait-cycle")
        assert set(cycle.pids) == {a, b}


def test_engine_names_the_three_process_pipe_ring_and_not_the_launcher() -> None:
    with started(programs.PIPE_RING) as info:
        members = {info["reader"], *info["writers"]}
        settle_in(sorted(members), ["read"])
        settle_in([info["launcher"]], ["wait4"])
        _, diagnosis = _diagnose(info["launcher"])
        cycle = next(o for o in diagnosis.observations if o.id == "wait-cycle")
        assert set(cycle.pids) == members
        assert diagnosis.hypotheses[0].id == "deadlock"


def test_engine_says_network_wait_for_a_listener_that_never_accepts() -> None:
    with started(programs.TCP_NOT_ACCEPTED) as info:
        settle_in([info["client"]], ["recvfrom", "recvmsg", "read"])
        _, diagnosis = _diagnose(info["listener"])
        seen = next(o for o in diagnosis.observations if o.id == "wait-not-accepted")
        assert f"127.0.0.1:{info['port']}" in seen.text
        network = next(h for h in diagnosis.hypotheses if h.id == "network-wait")
        assert network.status in ("likely", "possible") and f"127.0.0.1:{info['port']}" in network.title


def test_engine_names_the_process_everyone_waits_on() -> None:
    with started(programs.BARRIER) as info:
        settle_in(info["parties"], ["futex"])
        _, diagnosis = _diagnose(info["launcher"])
        hub = next(o for o in diagnosis.observations if o.id == "wait-hub")
        assert hub.figures["hub_pid"] == info["launcher"]
        top = next(h for h in diagnosis.hypotheses if h.id == "wait-for-missing-rank")
        assert f"PID {info['launcher']}" in top.title


def test_report_json_carries_waits_with_the_documented_fields() -> None:
    with started(programs.PIPE_CYCLE) as info:
        a, b = info["a"], info["b"]
        settle_in([a, b], ["read"])
        result = subprocess.run([sys.executable, "-m", "triage_tui", "report", str(info["launcher"]), "--format",
                                 "json", "--duration", "0.5", "--interval", "0.5"], capture_output=True, text=True,
                                timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        assert isinstance(data["waits"], list)
        for item in data["waits"]:
            assert {"pid", "tid", "kind", "object", "peer_pids", "detail"} <= set(item)
            assert item["kind"] in WAIT_KINDS
        by_pid = {w["pid"]: w for w in data["waits"] if w["tid"] == w["pid"]}
        assert by_pid[a]["kind"] == "pipe" and by_pid[a]["peer_pids"] == [b]
        assert by_pid[b]["peer_pids"] == [a]


def test_engine_says_crashed_worker_when_a_peer_of_the_shared_wait_exits() -> None:
    with started(programs.BARRIER_PARTY_DIES) as info:
        parties, doomed, proc = info["parties"], info["doomed"], info["_proc"]
        settle_in(parties, ["futex"])
        settle_in([doomed], ["read"])
        host = LocalHost()
        engine = DiagnosisEngine()
        try:
            target = host.resolve([str(info["launcher"])])
            before = host.collect(target, CollectOptions())
            assert all(doomed in w.peer_pids for w in before.waits if w.pid in parties and w.tid == w.pid)
            engine.update(before)
            proc.stdin.write("go\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "gone"  # the launcher reaped it
            diagnosis = engine.update(host.collect(target, CollectOptions()))
        finally:
            host.close()
        seen = next(o for o in diagnosis.observations if o.id == "wait-on-exited")
        assert seen.figures["exited_pid"] == doomed and seen.figures["exited_waiter"] in parties
        crashed = next(h for h in diagnosis.hypotheses if h.id == "crashed-worker")
        assert f"PID {doomed}" in crashed.title and crashed.status in ("likely", "possible")


CLIENT = "import socket, sys; s = socket.create_connection(('127.0.0.1', int(sys.argv[-1]))); s.recv(1)"


def _blocked_client(*argv: str) -> tuple[subprocess.Popen, socket.socket, socket.socket]:
    """A client reading a connection this test accepted and never answers (an upstream outside its tree)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    client = subprocess.Popen([sys.executable, "-c", CLIENT, *argv, str(port)])
    conn, _ = listener.accept()
    settle_in([client.pid], ["recvfrom", "recvmsg", "read"])
    return client, listener, conn


def test_engine_names_an_upstream_outside_the_tree_with_its_address() -> None:
    client, listener, conn = _blocked_client()
    try:
        snapshot, diagnosis = _diagnose(client.pid)
        port = listener.getsockname()[1]
        wait = next(w for w in snapshot.waits if w.pid == client.pid)
        assert wait.kind == "tcp" and wait.peer_outside == (os.getpid(),)
        seen = next(o for o in diagnosis.observations if o.id == "wait-upstream")
        assert f"127.0.0.1:{port}" in seen.text
        network = next(h for h in diagnosis.hypotheses if h.id == "network-wait")
        assert network.title.startswith("Waiting on an upstream") and f"127.0.0.1:{port}" in network.title
        assert network.status in ("likely", "possible")
    finally:
        client.kill()
        client.wait()
        conn.close()
        listener.close()


def test_engine_says_rendezvous_when_the_command_line_announces_the_port() -> None:
    client, listener, conn = _blocked_client("--master-port")
    try:
        _, diagnosis = _diagnose(client.pid)
        assert any(o.id == "wait-rendezvous" for o in diagnosis.observations)
        network = next(h for h in diagnosis.hypotheses if h.id == "network-wait")
        assert network.title.startswith("Waiting at rendezvous") and network.status in ("likely", "possible")
    finally:
        client.kill()
        client.wait()
        conn.close()
        listener.close()


def test_a_carried_idle_process_is_reread_once_it_has_run() -> None:
    """Reads of an idle process are reused between refreshes only while it provably has not run: once it
    wakes and blocks elsewhere, the next refresh shows the new wait."""
    first_r, first_w = os.pipe()
    second_r, second_w = os.pipe()
    code = "import os, sys; os.read(int(sys.argv[1]), 1); os.read(int(sys.argv[2]), 1)"
    reader = subprocess.Popen([sys.executable, "-c", code, str(first_r), str(second_r)],
                              pass_fds=[first_r, second_r])
    host = LocalHost()
    try:
        target = host.resolve([str(reader.pid)])
        settle_in([reader.pid], ["read"])
        objects = []
        for _ in range(3):  # the second and third refreshes may reuse the first's reads
            snap = host.collect(target, CollectOptions())
            objects.append(next(w.object for w in snap.waits if w.pid == reader.pid))
        assert len(set(objects)) == 1 and objects[0] == f"pipe:[{os.fstat(first_r).st_ino}]"
        os.write(first_w, b"x")
        # it woke, read the byte and now blocks on the second pipe
        poll_until(lambda: main_fd(reader.pid) == second_r, "the reader to block on its second pipe")
        snap = host.collect(target, CollectOptions())
        assert next(w.object for w in snap.waits if w.pid == reader.pid) == f"pipe:[{os.fstat(second_r).st_ino}]"
    finally:
        host.close()
        reader.kill()
        reader.wait()
        for fd in (first_r, first_w, second_r, second_w):
            os.close(fd)


def poll_until(condition: Callable[[], bool], what: str, tries: int = 12000) -> None:
    """Until `condition` holds, yielding the CPU between looks (a bare spin starves the very child it waits for
    on a busy two-core machine); a count of tries, then a clear failure."""
    for _ in range(tries):
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError(f"waited {tries} tries for {what}")


def main_fd(pid: int) -> int:
    """The fd the main thread's read is on, -1 when not in a read."""
    try:
        call = parse_syscall(read_text(f"/proc/{pid}/syscall"))
    except OSError:
        return -1
    return call.args[0] if call is not None and call.name == "read" else -1


def _asleep_twice(host: LocalHost, target, pid: int):  # type: ignore[no-untyped-def]
    """The main-thread waits of two refreshes in a row that each caught `pid` asleep in its loop's call, and in
    the second of which it had run since the first (its context switches moved); and what each carried on."""
    last = last_kept = None
    for _ in range(500):  # until two refreshes in a row catch it so (not a time: a count of tries)
        snap = host.collect(target, CollectOptions())
        row = next(p for p in snap.processes if p.pid == pid)
        wait = next((w for w in snap.waits if w.pid == pid and w.tid == pid), None)
        kept = host._collector.waits._carry.get(pid)  # noqa: SLF001 - what the next refresh may reuse
        asleep = wait is not None and wait.state == "S" and wait.syscall == "clock_nanosleep"
        if asleep and last is not None and row.ctx_voluntary_delta:
            return last, wait, last_kept, kept
        last, last_kept = (wait, kept) if asleep else (None, None)
    raise AssertionError("the sleeper was never seen asleep in two refreshes in a row after running")


def _asleep_now(pid: int) -> Wait:
    """A read with nothing carried that caught `pid` asleep in its loop's call: it wakes every 5 ms, and on a busy
    machine a read can find it runnable (state R, no wait to compare) between two sleeps."""
    for _ in range(500):  # a count of tries, not a time
        wait = waits_of([pid]).get(pid)
        if wait is not None and wait.state == "S" and wait.syscall == "clock_nanosleep":
            return wait
    raise AssertionError("the sleeper was never caught asleep by a fresh read")


def test_a_process_that_runs_and_sleeps_again_in_the_same_call_keeps_its_wait_and_a_new_one_is_read() -> None:
    """A process that ran since the last refresh has its system call read again every refresh. Back in the very
    call it was in (the same text: number, arguments, stack), a wait worked out from that text alone (a sleep) is
    last refresh's object, equal to what a fresh read finds; once it blocks elsewhere, the new wait is shown."""
    read_end, write_end = os.pipe()
    flag = f"/tmp/triage-test-sleeper-{os.getpid()}"
    code = ("import os, sys, time\n"
            "while not os.path.exists(sys.argv[2]): time.sleep(0.005)\n"
            "os.read(int(sys.argv[1]), 1)\n")
    sleeper = subprocess.Popen([sys.executable, "-c", code, str(read_end), flag], pass_fds=[read_end])
    host = LocalHost()
    try:
        target = host.resolve([str(sleeper.pid)])
        settle_in([sleeper.pid], ["clock_nanosleep"])
        first, again, first_kept, kept = _asleep_twice(host, target, sleeper.pid)
        assert first.kind == "sleep" and again is first  # it ran, and was read: the same call, the same wait
        # and what the next refresh may reuse of it is the first's record (the same text, nothing else read)
        assert kept is first_kept and kept.from_text and kept.waits == (first,)
        fresh = _asleep_now(sleeper.pid)
        assert fresh == again and fresh is not again  # what a read with nothing carried says
        with open(flag, "w"):
            pass
        # it left the loop and blocks on the pipe
        poll_until(lambda: main_fd(sleeper.pid) == read_end, "the sleeper to block on its pipe")
        snap = host.collect(target, CollectOptions())
        now = next(w for w in snap.waits if w.pid == sleeper.pid and w.tid == sleeper.pid)
        assert now.kind == "pipe" and now.object == f"pipe:[{os.fstat(read_end).st_ino}]"
        kept = host._collector.waits._carry[sleeper.pid]  # noqa: SLF001 - carried on: the new call, not the sleep
        assert kept is not first_kept and not kept.from_text and kept.waits == (now,)
        assert kept.syscall != first_kept.syscall  # the read(2) it blocks in, as read now
    finally:
        host.close()
        sleeper.kill()
        sleeper.wait()
        os.close(read_end)
        os.close(write_end)
        if os.path.exists(flag):
            os.remove(flag)
