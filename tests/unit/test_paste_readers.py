"""The paste readers, on real output: gdb `thread apply all bt` + `py-bt`, pystack (with and without --native),
py-spy (plain, --native --locals) and faulthandler, each captured from the same stuck program (two threads
deadlocked on two locks, the main thread joining one of them: tests/unit/fixtures/paste/); plus the pieces that
are not dumps (chat and quote prefixes, torchrun summaries, prose figures) and the bounded input reader."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.gdb_text import parse_gdb, parse_pystack
from triage_tui.parse.paste_input import MAX_LINE, decode_paste, read_paste
from triage_tui.parse.paste_split import split_paste
from triage_tui.parse.prose_figures import figures_in
from triage_tui.parse.pyspy_text import parse_pyspy_text
from triage_tui.parse.torchrun_summary import failures

FIX = Path(__file__).parent / "fixtures" / "paste"


def _top(text: str):
    return diagnose_text(text).diagnosis.hypotheses[0]


def test_gdb_bt_and_py_bt_of_one_process_are_one_process_with_python_frames() -> None:
    text = (FIX / "gdb_deadlock_bt_pybt.txt").read_text()
    (proc,) = parse_gdb(text)
    assert len(proc.threads) == 3
    main = next(t for t in proc.threads if t.name == "MainThread")
    assert main.tid == proc.pid  # the main thread's LWP is the PID
    files = {f.file for t in proc.threads for f in t.frames}
    assert "/tmp/paste_stuck.py" in files and any(f.endswith("futex-internal.c") for f in files)
    top = _top(text)
    assert top.id == "deadlock" and top.status == "likely", top


def test_several_gdb_dumps_one_after_the_other_are_several_processes() -> None:
    one = (FIX / "gdb_deadlock_bt_pybt.txt").read_text().split("Traceback (most recent call first):")[0]
    other = one.replace("LWP 19", "LWP 29")  # a second rank: the same dump, other LWPs
    assert len(parse_gdb(one + "\n" + other)) == 2


def test_pystack_native_names_the_lock_waits() -> None:
    text = (FIX / "pystack_native_deadlock.txt").read_text()
    (proc,) = parse_pystack(text)
    assert len(proc.threads) == 3 and any(t.name == "MainThread" and t.tid == proc.pid for t in proc.threads)
    assert all(t.frames[0].native for t in proc.threads)  # innermost first: the futex wait
    assert _top(text).id == "deadlock"


def test_pystack_python_only_keeps_the_source_lines() -> None:
    (proc,) = parse_pystack((FIX / "pystack_deadlock.txt").read_text())
    main = next(t for t in proc.threads if t.name == "MainThread")
    assert main.frames[0].function == "_wait_for_tstate_lock" and "lock.acquire" in main.frames[0].code


def test_py_spy_dumps_plain_and_native_with_locals() -> None:
    (plain,) = parse_pyspy_text((FIX / "pyspy_deadlock.txt").read_text())
    assert {t.name for t in plain.threads} == {"MainThread", "first", "second"}
    (native,) = parse_pyspy_text((FIX / "pyspy_native_locals_deadlock.txt").read_text())
    frames = [f for t in native.threads for f in t.frames]
    assert any(f.native and "PyThread_acquire_lock_timed" in f.function for f in frames)
    assert any(f.locals.get("lock", "").startswith("<_thread.lock") for f in frames)
    assert _top((FIX / "pyspy_native_locals_deadlock.txt").read_text()).id == "deadlock"


def test_faulthandler_timeout_dump_is_read() -> None:
    parts = diagnose_text((FIX / "faulthandler_timeout.txt").read_text()).parts
    assert [p.kind for p in parts if p.used and p.kind == "faulthandler"] == ["faulthandler"]


def test_a_dump_pasted_in_a_chat_through_a_quote_is_still_a_dump() -> None:
    dump = (FIX / "pyspy_deadlock.txt").read_text().splitlines()
    chat = "\n".join([f"[10:32] alice: {dump[0]}"] + [f"> {ln}" for ln in dump[1:]])
    parts = split_paste(chat)
    assert [p.kind for p in parts] == ["py-spy"]
    assert parts[0].first_line == 1 and parts[0].last_line == len(dump)


def test_a_markdown_heading_is_not_a_root_prompt_but_a_root_prompt_is() -> None:
    kinds = [p.kind for p in split_paste("# My training hangs\n\n# free -g\n")]
    assert kinds == ["text", "command"]


def test_torchrun_failure_summary() -> None:
    text = ("[0]:\n  time      : 2023-09-14_01:45:50\n  rank      : 2 (local_rank: 2)\n"
            "  exitcode  : -9 (pid: 36071)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 36071\n")
    (f,) = failures(text)
    assert (f.rank, f.pid, f.exitcode, f.signal) == (2, 36071, -9, "SIGKILL")
    assert failures("failed (exitcode: -7) local_rank: 0 (pid: 2410412) of binary: /bin/python")[0].signal == "SIGBUS"


@pytest.mark.parametrize("sentence, kind, value", [
    ("GPU util 100 % at 19 W on all eight", "gpu-util", 100.0),
    ("GPU util 100 % at 19 W on all eight", "gpu-power", 19.0),
    ("the scheduler sits at 0 % CPU", "cpu-util", 0.0),
    ("it has been stuck for 30 minutes", "stuck-for", 1800.0),
    ("RSS 425 GB per worker", "rss", 425e9),
])
def test_figures_quoted_in_prose(sentence: str, kind: str, value: float) -> None:
    got = {f.kind: f.value for f in figures_in([(1, sentence)])}
    assert got.get(kind) == value, got


def test_prose_figures_make_a_cause_with_their_subject_and_unit() -> None:
    d = diagnose_text("All ranks hang. GPU util 100 % at 19 W, and the log has been silent for 30 minutes.\n").diagnosis
    assert d.hypotheses[0].id == "collective-hang"
    assert any("spin-wait" in line for line in d.hypotheses[0].for_)
    assert "prose-gpu-busy" not in {o.id for o in diagnose_text("100 % done, 19 W\n").diagnosis.observations}


def test_bounded_reading_says_what_it_cut() -> None:
    raw = b"ok line\n" + b"x" * (MAX_LINE + 10) + b"\nNUL\x00here \xff\xfe\n"
    got = decode_paste(raw)
    assert not got.error and all(len(ln) <= MAX_LINE + 6 for ln in got.text.split("\n"))
    assert any("cut" in c for c in got.cuts) and any("NUL" in c for c in got.cuts) and any("U+FFFD" in c for c in got.cuts)
    assert decode_paste(bytes(range(256)) * 64).error.startswith("the input looks binary")
    endless = io.BytesIO(b"a\n" * (3 << 20))  # 6 MiB: more than is read
    capped = read_paste(endless)
    assert any("not read" in c for c in capped.cuts) and endless.tell() <= (4 << 20) + 1


def test_vmstat_ss_and_top_as_captured_on_this_machine() -> None:
    vm = diagnose_text((FIX / "vmstat_real.txt").read_text())
    assert [p.kind for p in vm.parts if p.used] == ["vmstat"] and "runnable" in vm.parts[0].used_as
    syn = diagnose_text((FIX / "ss_syn_sent_real.txt").read_text())  # a listener whose backlog is full
    assert any(o.id == "socket-connecting" for o in syn.diagnosis.observations)
    assert syn.diagnosis.hypotheses[0].id == "network-wait"
    listening = diagnose_text((FIX / "ss_real.txt").read_text())
    assert [p.kind for p in listening.parts if p.used] == ["ss"]
    assert not any(o.id == "socket-connecting" for o in listening.diagnosis.observations)
    top = diagnose_text((FIX / "top_real.txt").read_text())
    procs = top.diagnosis.observations and [p for p in top.parts if p.used and p.kind == "ps"]
    assert procs and "processes (ps)" in procs[0].used_as


# nvidia-smi -q and dmon as nvidia-smi prints them (the build machine has no GPU to capture from)
SMI_Q = """==============NVSMI LOG==============

Driver Version                            : 550.54.15
Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    FB Memory Usage
        Total                             : 81559 MiB
        Used                              : 76017 MiB
    Utilization
        Gpu                               : 100 %
        Memory                            : 0 %
    GPU Power Readings
        Power Draw                        : 112.35 W
        Current Power Limit               : 700.00 W
"""
DMON = """# gpu   pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk
# Idx     W      C      C      %      %      %      %    MHz    MHz
    0    70     45      -    100      0      0      0   1593   1410
    1    71     44      -    100      0      0      0   1593   1410
"""


def test_nvidia_smi_query_and_dmon_give_gpu_figures() -> None:
    q = diagnose_text(SMI_Q)
    assert "1 GPUs (nvidia-smi -q)" in [p.used_as for p in q.parts if p.used]
    assert "gpu-spin" in {o.id for o in q.diagnosis.observations}  # 100 % at 16 % of its power limit
    d = diagnose_text(DMON)
    assert "gpu-busy-low-watts" in {o.id for o in d.diagnosis.observations}
