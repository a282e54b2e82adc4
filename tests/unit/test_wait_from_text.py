"""Which system calls' waits are worked out from the call's text alone (and so may be kept while the text is the
same, WaitReads.same_wait_from_text): never one that reads an fd table, a socket, memory, maps or a child."""

from __future__ import annotations

from triage_tui.collect.waits import _from_call_alone
from triage_tui.parse.syscalls import Syscall


def call(name: str, *args: int) -> Syscall:
    return Syscall(0, name, tuple(args) + (0,) * (6 - len(args)))


def test_sleeps_signal_waits_and_private_futexes_come_from_the_text() -> None:
    assert _from_call_alone(call("clock_nanosleep"))
    assert _from_call_alone(call("nanosleep"))
    assert _from_call_alone(call("pause"))
    assert _from_call_alone(call("futex", 0x7F00, 128))  # FUTEX_WAIT_PRIVATE
    assert _from_call_alone(call("sched_yield"))  # a call not resolved further: "in sched_yield"


def test_waits_that_read_anything_else_do_not() -> None:
    for name in ("read", "recvfrom", "write", "accept4", "connect", "flock", "fcntl", "poll", "select",
                 "epoll_wait", "wait4", "waitid"):
        assert not _from_call_alone(call(name, 3)), name
    assert not _from_call_alone(call("futex", 0x7F00, 0))  # a shared futex: its mapping is looked up
