"""Real programs, each stuck in one way, watched live: the expected hypothesis must come out on top
within a bounded number of ticks (the tick interval is short; no assertion is about time)."""

from __future__ import annotations

import os

from .conftest import watch


def test_lock_deadlock_between_threads(spawn) -> None:
    prog = spawn("deadlock")
    out = watch("deadlock", [prog.proc.pid], "deadlock", max_ticks=15, stacks_when_idle=True)
    assert out.top == "deadlock", out.ranking[:3]
    assert any("locks" in t for t in out.hypothesis("deadlock").for_)


def test_busy_loop(spawn) -> None:
    prog = spawn("busy")
    out = watch("busy-loop", [prog.proc.pid], "busy-loop", max_ticks=10)
    assert out.top == "busy-loop", out.ranking[:3]


def test_stopped_process(spawn) -> None:
    prog = spawn("stopped")
    out = watch("stopped", [prog.proc.pid], "stopped", max_ticks=10)
    assert out.top == "stopped", out.ranking[:3]
    assert f"PID {prog.proc.pid}" in out.hypothesis("stopped").title


def test_zombie_child(spawn) -> None:
    prog = spawn("zombie")
    out = watch("zombie", [prog.proc.pid], "crashed-worker", max_ticks=10)
    assert out.top == "crashed-worker", out.ranking[:3]
    assert any(f"PID {prog.ready[0]}" in t and "zombie" in t for t in out.hypothesis("crashed-worker").for_)


def test_worker_dies_while_the_others_wait(spawn, tmp_path) -> None:
    fifo = str(tmp_path / "die")
    os.mkfifo(fifo)
    log = tmp_path / "launcher.log"
    with open(log, "wb") as err:
        prog = spawn("workers", fifo, stderr=err)
    doomed = int(prog.ready[2])

    def kill_worker_after_the_first_look(tick: int) -> None:
        if tick == 3:
            with open(fifo, "w") as fh:
                fh.write("die")

    out = watch("worker-died", [prog.proc.pid], "crashed-worker", max_ticks=15, logs=(str(log),),
                before_tick=kill_worker_after_the_first_look)
    assert out.top == "crashed-worker", out.ranking[:3]
    assert any(str(doomed) in t for t in out.hypothesis("crashed-worker").for_), out.hypothesis("crashed-worker")


def test_still_loading(spawn, tmp_path) -> None:
    weights = tmp_path / "model.safetensors"
    with open(weights, "wb") as fh:
        fh.write(os.urandom(32 << 20))
    log = tmp_path / "server.log"
    prog = spawn("loading", str(weights), str(log))
    out = watch("still-loading", [prog.proc.pid], "still-loading", max_ticks=12, logs=(str(log),), hold_ticks=2)
    assert out.top == "still-loading", out.ranking[:3]


def test_rendezvous_wait(spawn, tmp_path) -> None:
    import socket
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "rank.log"
    prog = spawn("rendezvous", str(port), str(log))
    out = watch("rendezvous", [prog.proc.pid], "network-wait", max_ticks=12, logs=(str(log),))
    assert out.top == "network-wait", out.ranking[:3]


def test_healthy_server(spawn) -> None:
    prog = spawn("server")
    port = int(prog.ready[0])
    out = watch("healthy", [prog.proc.pid], "healthy", max_ticks=8, port=port, hold_ticks=2)
    assert out.top == "healthy", out.ranking[:3]
    assert any("accepts connections" in t for t in out.hypothesis("healthy").for_)


def test_demo_incident_ranks_a_wait_for_the_missing_rank_and_names_it(tmp_path) -> None:
    from triage_tui.demo.incident import DemoIncident

    with DemoIncident(workers=4, weights_mb=16, base_dir=str(tmp_path)) as demo:
        info = demo.info
        assert info is not None
        out = watch("demo", [info.launcher_pid], "wait-for-missing-rank", max_ticks=20, logs=(info.log_path,),
                    port=info.port, stacks_when_idle=True, hold_ticks=2, until=lambda m: m.stacks is not None)
    assert out.top == "wait-for-missing-rank", out.ranking[:3]
    top = out.hypothesis("wait-for-missing-rank")
    assert f"PID {info.odd_pid}" in top.title, top.title
    assert out.hypothesis("crashed-worker").status == "ruled out"
    oom = out.hypothesis("oom")
    assert oom.status == "ruled out" and "available" in oom.against[0]




def _own_memory_cgroup() -> tuple[str, tuple[str, ...]]:
    """(the memory cgroup directory this test runs in, the limit files to write): cgroup v1 at
    /sys/fs/cgroup/memory, else cgroup v2 at /sys/fs/cgroup. ("", ()) where neither is found."""
    lines = open("/proc/self/cgroup").read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            where = "/sys/fs/cgroup/memory" + path
            if os.path.exists(os.path.join(where, "cgroup.procs")):
                return where, ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
    for line in lines:
        if line.startswith("0::"):
            where = "/sys/fs/cgroup" + line[3:]
            if os.path.exists(os.path.join(where, "cgroup.controllers")):
                return where, ("memory.max", "memory.swap.max")
    return "", ()


RECORDED_OOM = """[812345.234567] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/triage-oom,task_memcg=/triage-oom,task=python3,pid={pid},uid=0
[812345.234600] Memory cgroup out of memory: Killed process {pid} (python3) total-vm:90000kB, anon-rss:65000kB, file-rss:1024kB, shmem-rss:0kB, UID:0 pgtables:200kB oom_score_adj:0"""


def test_memory_pressure_in_a_small_cgroup_gets_oom_killed(spawn, tmp_path) -> None:
    """A child is moved into a child cgroup (64 MiB, below our own) and allocates until the OOM killer
    takes it. Where the cgroup or the kernel log is refused, the recorded kernel text of such a kill
    goes through the same engine instead, and the test says so in its assertion message."""
    from triage_tui.diagnose.pasted_text import diagnose_text

    log = tmp_path / "parent.log"
    prog = spawn("oom_parent", "512", str(log))
    hog = int(prog.ready[0])
    parent_dir, knobs = _own_memory_cgroup()
    cgroup = os.path.join(parent_dir, f"triage-oom-{os.getpid()}") if parent_dir else ""
    made = False
    try:
        try:
            if not cgroup:
                raise OSError("no memory cgroup found for this process")
            os.mkdir(cgroup)
            made = True
            with open(os.path.join(cgroup, knobs[0]), "w") as fh:  # the limit itself must take
                fh.write(str(64 << 20))
            if os.path.exists(os.path.join(cgroup, knobs[1])):  # swap too, where the kernel accounts it
                with open(os.path.join(cgroup, knobs[1]), "w") as fh:
                    fh.write(str(64 << 20) if knobs[1].startswith("memory.memsw") else "0")
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as fh:
                fh.write(str(hog))
        except OSError as exc:
            refused = f"cgroup refused ({exc}): recorded kernel text instead"
        else:
            refused = ""

        def let_it_allocate(tick: int) -> None:
            if tick == 2 and not refused:
                assert prog.proc.stdin is not None
                prog.proc.stdin.write(b"go\n")
                prog.proc.stdin.flush()
                assert prog.readline().startswith("child-exited")

        out = watch("oom", [prog.proc.pid], "oom", max_ticks=12, logs=(str(log),), before_tick=let_it_allocate)
        kernel_ok = out.last.snapshot.kernel.error is None
        if not refused and kernel_ok:
            assert out.top == "oom", out.ranking[:3]
            assert any(str(hog) in t for t in out.hypothesis("oom").for_)
        else:  # covered with the recorded text of the same kill, through the same engine
            text = RECORDED_OOM.format(pid=hog) + f"\nERROR worker pid {hog} died, exit code: -9\n"
            ranked = [h.id for h in diagnose_text(text).diagnosis.hypotheses]
            assert ranked[0] == "oom", (refused or "kernel log unreadable", ranked[:3])
    finally:
        if made:
            for _ in range(50):  # the killed child leaves the cgroup once reaped
                try:
                    os.rmdir(cgroup)
                    break
                except OSError:
                    prog.proc.poll()
