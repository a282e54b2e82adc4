"""Kernel log lines → OOM-kill and segfault events, in every format the parser accepts."""

from __future__ import annotations

from triage_tui.model import is_known
from triage_tui.parse.dmesg import parse_kernel_line, parse_kernel_lines

DMESG = """[  100.000001] python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0
[  100.000200] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/job,task_memcg=/job,task=python3,pid=46433,uid=0
[  100.000300] Memory cgroup out of memory: Killed process 46433 (python3) total-vm:5502028kB, anon-rss:4125036kB
[  101.5] Out of memory: Killed process 777 (sched_tp3) total-vm:1kB
[  102.000000] python3[4242]: segfault at 0 ip 00007f1c2d3e4f5a sp 00007ffd error 4 in libc.so.6[7f1c2d300000+195000]
[  103.000000] traps: python3[5151] general protection fault ip:7f sp:7ffd error:0 in libc.so.6
[  104.000000] EXT4-fs (vda): mounted filesystem
not a kernel line at all
[ broken timestamp] Out of memory: Killed process 888 (x)
"""


def test_oom_and_segfault_lines_name_pids() -> None:
    events = parse_kernel_lines(DMESG, boot_time=1000.0)
    assert [(e.kind, e.pid) for e in events] == [
        ("oom-kill", 46433), ("oom-kill", 46433), ("oom-kill", 777), ("segfault", 4242), ("other", 5151),
        ("oom-kill", 888)]
    assert events[0].at == 1100.0002
    assert events[2].at == 1101.5
    assert not is_known(events[-1].at)  # malformed timestamp: the event stays, the time is unknown


def test_without_boot_time_timestamps_are_unavailable() -> None:
    event = parse_kernel_line("[  101.5] Out of memory: Killed process 777 (sched_tp3)")
    assert event is not None and event.pid == 777
    assert not is_known(event.at) and "since boot" in event.at.reason  # type: ignore[union-attr]


def test_kmsg_record_and_dmesg_t_formats() -> None:
    kmsg = parse_kernel_line("3,1234,101500000,-;Out of memory: Killed process 99 (python)", boot_time=10.0)
    assert kmsg is not None and kmsg.pid == 99 and kmsg.at == 111.5
    assert kmsg.text.startswith("Out of memory")
    human = parse_kernel_line("[Sun Nov 29 13:43:13 2026] python[12]: segfault at 8 ip 1 sp 2 error 4")
    assert human is not None and human.kind == "segfault" and is_known(human.at)


def test_lines_that_name_no_event() -> None:
    assert parse_kernel_line("") is None
    assert parse_kernel_line("[  1.0] random: crng reseeded") is None
    assert parse_kernel_line("Killed process without the prefix 12") is None
