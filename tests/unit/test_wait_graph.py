"""The wait-for graph's rules on hand-built waits: what is a deadlock, a hub, a network-fs I/O wait.

The live behaviour is tested on real programs (tests/realproc/test_waits.py); these pin the edge cases a
real program cannot stage here (a network filesystem) or that must not fire (a cycle someone can end)."""

from __future__ import annotations

from triage_tui.diagnose.engine import DiagnosisEngine
from triage_tui.diagnose.wait_graph import deadlocks, hub, wait_observations
from triage_tui.model.snapshot import ProcessInfo, Snapshot
from triage_tui.model.waits import Wait


def snap(waits: list[Wait], pids: tuple[int, ...] = (1, 2, 3, 4)) -> Snapshot:
    rows = tuple(ProcessInfo(pid=p, ppid=1 if p != 1 else 0, name=f"p{p}", state="S") for p in pids)
    return Snapshot(taken_at=100.0, processes=rows, waits=tuple(waits))


def pipe(pid: int, *peers: int) -> Wait:
    return Wait(pid=pid, tid=pid, kind="pipe", object=f"pipe:[{pid}]", peer_pids=peers, syscall="read", state="S")


def test_a_cycle_nobody_outside_can_end_is_a_deadlock() -> None:
    assert deadlocks(snap([pipe(2, 3), pipe(3, 2)])) == [[2, 3]]


def test_a_cycle_with_a_way_out_is_not_a_deadlock() -> None:
    # 2 may be woken by 4 as well as by 3, and 4 waits on nobody: not a knot
    assert deadlocks(snap([pipe(2, 3, 4), pipe(3, 2)])) == []


def test_a_running_member_breaks_the_deadlock() -> None:
    running = Wait(pid=3, tid=3, kind="running", object="on CPU", state="R")
    other = Wait(pid=3, tid=30, kind="pipe", object="pipe:[9]", peer_pids=(2,), syscall="read", state="S")
    assert deadlocks(snap([pipe(2, 3), running, other])) == []


def test_co_waiters_on_one_shared_futex_are_no_cycle() -> None:
    def futex(pid: int) -> Wait:
        return Wait(pid=pid, tid=pid, kind="futex", object="/dev/shm/sem.x+0x0", peer_pids=tuple({1, 2, 3} - {pid}),
                    shared_key="0:1+0x0", syscall="futex", state="S")
    s = snap([futex(2), futex(3), Wait(pid=1, tid=1, kind="sleep", object="clock_nanosleep", state="S")])
    assert deadlocks(s) == []
    assert hub(s) == 1  # both parties wait on the one mapper that is not waiting with them


def test_a_d_state_read_on_nfs_is_io_blocked_with_path_and_type() -> None:
    stuck = Wait(pid=2, tid=2, kind="file", object="/mnt/models/w.bin", path="/mnt/models/w.bin", fs_type="nfs4",
                 syscall="read", state="D", detail="/mnt/models/w.bin at offset 4096 on nfs4")
    history = [snap([stuck])]
    seen = next(o for o in wait_observations(history) if o.id == "wait-netfs-io")
    assert seen.figures["io_path"] == "/mnt/models/w.bin" and seen.figures["io_fs"] == "nfs4"
    top = DiagnosisEngine().update(history[0]).hypotheses
    io = next(h for h in top if h.id == "io-blocked")
    assert "/mnt/models/w.bin" in io.title and "nfs4" in io.title and io.status in ("likely", "possible")


def test_a_local_disk_read_is_not_a_network_fs_wait() -> None:
    local = Wait(pid=2, tid=2, kind="file", object="/data/w.bin", path="/data/w.bin", fs_type="ext4",
                 syscall="read", state="D")
    assert not [o for o in wait_observations([snap([local])]) if o.id == "wait-netfs-io"]


def test_waits_survive_the_record_keyframe_and_delta() -> None:
    from triage_tui.model.moment import Moment
    from triage_tui.model.waits import WaitSource
    from triage_tui.record.snapshot_codec import MomentDecoder, MomentEncoder

    first = snap([pipe(2, 3), pipe(3, 2)])
    second = snap([pipe(2, 3), Wait(pid=3, tid=3, kind="tcp", object="tcp a → b", address="10.0.0.1:29500",
                                    socket_state="ESTABLISHED", not_accepted=True, peer_pids=(4,), fd=5)])
    second = Snapshot(**{**second.__dict__, "taken_at": 102.0,
                         "waits_source": WaitSource(blocked_threads=2, duration_ms=0.5)})
    encoder, decoder = MomentEncoder(), MomentDecoder(lambda key: None)
    assert decoder.decode(encoder.encode(Moment(first))).snapshot.waits == first.waits
    back = decoder.decode(encoder.encode(Moment(second))).snapshot
    assert back.waits == second.waits and back.waits_source == second.waits_source


def test_a_cut_peer_list_is_never_called_a_deadlock() -> None:
    # 2's end is held by more processes than a wait keeps: who they are is partly unknown, so no knot
    cut = Wait(pid=2, tid=2, kind="pipe", object="pipe:[2]", peer_pids=(3,), peers_more=200, syscall="read")
    assert deadlocks(snap([cut, pipe(3, 2)])) == []
    assert deadlocks(snap([pipe(2, 3), pipe(3, 2)])) == [[2, 3]]
