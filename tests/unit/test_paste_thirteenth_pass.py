"""The thirteenth pass (issue 15), written from the seen sets (tests/corpus/cases .. cases-12), readers of tools'
output shapes and documented meanings (bench/paste_selection_13.py reports each per set, and leave-one-set-out): an
Xid read by its number (NVIDIA's Xid catalog: 79 is a lost board, 8 a channel the watchdog killed, an NVLink error
neither) and a list of what the kernel log did not show; a semaphore's wait frame as a lock wait; strace's socket read
left open; Ray's scheduler saying a task can never be placed. Each on the seen cases' real text and on the negatives
that must not fire.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_script import load_bench_script

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.rules import ROWS
from triage_tui.diagnose.vocabulary import VOCABULARY
from triage_tui.parse.prose_lexicon import scan_told
from triage_tui.parse.signal_lexicon import scan_line

from tests.unit.paste_diagnosis import ranked

ROOT = Path(__file__).resolve().parents[2]


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def _ids(line: str) -> set[str]:
    return {s.id for s in scan_line(line)} | {s.id for s in scan_told(line)}


# llama.cpp#27330 (cases-12): the driver's RC watchdog ends a CUDA-graph hang with Xid 8, again and again
XID_8 = """\
15:05:41  Xid 8  llama-server  channel 0x00000007
15:20:45  Xid 8  llama-server  channel 0x00000007
15:24:35  Xid 8  llama-server  channel 0x00000007
16:24:12  Xid 8  Xorg          channel 0x00000002
16:37:15  Xid 8  llama-server  channel 0x00000005
"""


def test_xid_8_is_a_channel_the_watchdog_killed_a_hung_gpu_not_a_lost_one() -> None:
    assert _ids("15:05:41  Xid 8  llama-server  channel 0x00000007") == {"log-xid-timeout"}
    assert _ids("NVRM: Xid (PCI:0000:01:00): 8, Channel 00000010") >= {"log-xid-timeout"}
    causes = _causes(XID_8)
    assert causes[:1] == ["gpu-hang"] and "gpu-lost" not in causes


@pytest.mark.parametrize("line", [
    # gpu-burn#1, ogkm-1151 (cases-2), gpud-604 (cases-2), nvsentinel-155 (cases)
    "[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.",
    "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00",
    "NVRM: fallen off the bus and is not responding to commands.",
    # a double-bit ECC error (Xid 48), and an Xid whose number the paste cut
    "NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, An uncorrectable double bit error (DBE) has been detected on GPU",
    "kernel: NVRM: Xid (PCI:0000:3b:00)[...]",
])
def test_an_xid_of_a_lost_board_is_still_a_lost_gpu(line: str) -> None:
    assert "log-xid" in _ids(line) and "log-xid-timeout" not in _ids(line)
    assert _causes(line)[:1] == ["gpu-lost"]


def test_a_denial_is_a_word_not_the_end_of_one() -> None:
    # "no Xid" denies; a word ending in "no" ("Jetson Nano") does not
    assert "told-word-gpu-lost" in _ids("Jetson Nano Xid 79 after boot")


@pytest.mark.parametrize("line", [
    # nccl#2241 (cases-7): NVLink errors on a B200 whose AllGather deadlocks: not a lost board
    "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)",
    "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error",
    "I collected dmesg output and I see a few Xids (145 and 137):",
    # an application's own faults, which a restart of the app clears (the catalog's RESTART_APP)
    "NVRM: Xid (0000:01:00): 13, 0005 00000000 0000502d 00000104 00000000 00000100",
    "NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000",
    # rtx6kpro#15 (cases-12): what the kernel log did NOT show
    "* No `NVRM: Xid`",
    "* No `GPU has fallen off the bus`",
    "there were no Xid errors in dmesg",
])
def test_an_xid_that_is_no_lost_board_or_one_denied_is_not_read_as_a_lost_gpu(line: str) -> None:
    assert not _ids(line) & {"log-xid", "told-word-gpu-lost"}


def test_nvlink_xids_beside_a_deadlocked_allgather_leave_the_collective_first() -> None:
    # nccl#2241 (cases-7), the paste's own lines
    text = ("Hi everyone, I'm hitting a deadlock in AllGather on B200 platform with 2 GPUs when memory is registered "
            "with ncclCommWindowRegister with bf16 array of size 9961472. Interestingly if I set NCCL_NVLS_ENABLE=0 "
            "the deadlock is not reproducing.\n\n"
            "I collected dmesg output and I see a few Xids (145 and 137):\n\n```\n"
            "kernel: NVRM: GPU1 kbifCacheVFInfo_GB100: Unable to read NV_PF0_INITIAL_AND_TOTAL_VFS\n"
            "kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)\n"
            "kernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error\n```\n")
    assert _causes(text)[:1] == ["collective-hang"]


# lib60870#134 (cases-12): two connection threads, each in the library's Semaphore_wait for what the other holds;
# the paste cut the frames below it (sem_wait, futex)
SEMAPHORES = """\
Thread 14 (Thread 0x7f5ee191d6c0 (LWP 42776)):
[...]
#5  0x00007f5ef26c6d53 in Semaphore_wait (self=0x60300001b520) at [...]/lib60870-C/src/hal/thread/linux/thread_linux.c:38
#6  0x00007f5ef26bd968 in handleTimeouts (self=0x61600000c980) at [...]/lib60870-C/src/iec60870/cs104/cs104_connection.c:844
#7  0x00007f5ef26bdddd in handleConnection (parameter=0x61600000c980) at [...]/lib60870-C/src/iec60870/cs104/cs104_connection.c:1033
#8  0x00007f5ee9c90402 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442
#9  0x00007f5ee9d1f590 in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81

Thread 9 (Thread 0x7f5ee41d46c0 (LWP 42771)):
[...]
#5  0x00007f5ef26c6d53 in Semaphore_wait (self=0x60300001b580) at [...]/lib60870-C/src/hal/thread/linux/thread_linux.c:38
#6  0x00007f5ef26bc79f in sendIMessage (self=0x61600000c980, frame=0x61200020ecc0) at [...]/lib60870-C/src/iec60870/cs104/cs104_connection.c:215
#7  0x00007f5ef26be40d in sendIMessageAndUpdateSentASDUs (self=0x61600000c980, frame=0x61200020ecc0) at [...]/lib60870-C/src/iec60870/cs104/cs104_connection.c:1259
"""


def test_two_threads_in_a_semaphores_wait_are_a_deadlock() -> None:
    from triage_tui.diagnose.wait_kinds import classify_frame
    from triage_tui.model.stacks import Frame

    assert _causes(SEMAPHORES)[:1] == ["deadlock"]
    for name in ("Semaphore_wait", "sem_wait", "semaphore_wait"):
        rule = classify_frame(Frame(function=name, file="", line=0, native=True))
        assert rule is not None and rule.kind == "lock", name
    # a function that only mentions a semaphore is no wait
    assert classify_frame(Frame(function="Semaphore_waitCount", file="", line=0, native=True)) is None


@pytest.mark.parametrize("line", [
    "recvfrom(5,[...]",  # requests#4624 (cases-12), the paste cut mid-call
    "recvfrom(5, ",  # what strace prints while the call blocks
    "[pid  4711] recv(12, ...",
])
def test_a_socket_read_strace_left_open_is_a_wait_with_no_end(line: str) -> None:
    assert "log-strace-wait-forever" in _ids(line)


@pytest.mark.parametrize("line", [
    'recvfrom(5, "HTTP/1.1 200 OK\\r\\n", 8192, 0, NULL, NULL) = 17',  # it returned
    "recvfrom(5, 0x7ffd, 8192, 0, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable)",
    "call recvfrom(5, buf) in a loop",  # not strace's line
])
def test_a_socket_read_that_returned_is_no_wait(line: str) -> None:
    assert "log-strace-wait-forever" not in _ids(line)


def test_a_strace_of_a_spider_blocked_in_recvfrom_is_a_network_wait() -> None:
    # requests#4624 (cases-12), as posted
    text = ("i write a python3 spider using requests .  it can run for a long time normally. but sometimes it block "
            "recv data forever .\n\nstrace  -p 12585:\nstrace: Process 12585 attached\nrecvfrom(5,[...]\n")
    assert _causes(text)[:1] == ["network-wait"]


def test_ray_saying_a_task_can_never_be_placed_is_a_result_that_never_comes() -> None:
    # ray#1734 (cases-12): ten actors of num_cpus=1 on a smaller machine; ray.get waits for ever
    text = "\n".join(f"Infeasible task. No nodes satisfy hard constraints for task = {h}" for h in (
        "94a4306a4e54cd71115be891fffbf4c28bf9999c", "0688623fc883ec4f74fc1dfc759f8f217b555277"))
    assert _causes(text)[:1] == ["event-never-fires"]
    assert "log-ray-infeasible" in _ids("Warning: The following resource request cannot be scheduled right now: "
                                        "{'CPU': 1.0}. This is likely due to all cluster resources being claimed by "
                                        "actors.")
    assert "log-ray-infeasible" not in _ids("the task was scheduled on node 3 and finished")


def test_the_new_ids_are_registered_and_read_by_a_rule_row() -> None:
    used = {term.lstrip("!").strip() for r in ROWS for term in r.when.replace("|", "&").split("&")}
    for oid in ("log-xid-timeout", "log-ray-infeasible"):
        assert oid in VOCABULARY and oid in used, oid


def test_the_selection_report_reads_only_the_seen_sets_and_switches_its_items_off() -> None:
    selection = load_bench_script("paste_selection_13")
    assert selection.SEEN[-1] == "cases-12" and not any(s in ("cases-13", "cases-14") for s in selection.SEEN)
    live = {(r.hypothesis, r.when) for r in ROWS}
    assert all(r in live for item in selection.ITEMS for r in item.rows)
    # switched off, each reading goes; back on, it returns
    xid = next(i for i in selection.ITEMS if i.name.startswith("Xid"))
    sem = next(i for i in selection.ITEMS if i.name.startswith("a semaphore"))
    with selection.switched_off((xid, sem)):
        assert "gpu-hang" not in _causes(XID_8) and "deadlock" not in _causes(SEMAPHORES)
        assert "told-word-gpu-lost" in _ids("* No `NVRM: Xid`")
    assert _causes(XID_8)[:1] == ["gpu-hang"] and _causes(SEMAPHORES)[:1] == ["deadlock"]
    assert "told-word-gpu-lost" not in _ids("* No `NVRM: Xid`")
