"""The pasted-text parsers, each on real shapes and on malformed input."""

from __future__ import annotations

import pytest

from triage_tui.parse import curl_text, faulthandler, free, log_text, nvidia_smi, proc_status, ps, pyspy_text
from triage_tui.parse.paste_evidence import evidence_from_paste
from triage_tui.parse.paste_split import split_paste
from triage_tui.parse.text_errors import ParseError

GiB = 1 << 30

PS_AUX = """USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
root       46294  0.0  0.2 55123456 927123 pts/1  Sl+  10:00   0:28 python3 -m sglang.launch_server --tp-size 8
root       46433 12.5 90.1 91234567 445644800 ?   Dl   10:00  1-02:03:04 sglang::scheduler_TP0
garbage line
"""


def test_ps_aux_header_driven() -> None:
    table = ps.parse_ps(PS_AUX)
    a, b = table.processes
    assert (a.pid, a.state, a.cpu_percent, a.cpu_time_s, a.rss_bytes) == (46294, "S", 0.0, 28.0, 927123 * 1024)
    assert a.cmdline[-2:] == ("--tp-size", "8") and a.name == "python3" and a.user == "root"
    assert b.state == "D" and b.cpu_time_s == 86400 + 2 * 3600 + 3 * 60 + 4
    assert table.skipped == ("garbage line",)


def test_ps_eo_any_column_order() -> None:
    text = """  PPID     PID S MAJFLT NLWP WCHAN  COMM
     1    200 D  77   12 nfs_wa python
   200    201 Z   0    1 -      python <defunct>"""
    a, b = ps.parse_ps(text).processes
    assert (a.pid, a.ppid, a.state, a.major_faults, a.threads, a.wchan) == (200, 1, "D", 77, 12, "nfs_wa")
    assert b.state == "Z" and b.ppid == 200


@pytest.mark.parametrize("bad", ["", "no header here\n1 2 3", "PID\n12"])
def test_ps_without_a_header_raises(bad: str) -> None:
    with pytest.raises(ParseError):
        ps.parse_ps(bad)


def test_ps_time_formats() -> None:
    assert ps.parse_cputime("0:28") == 28 and ps.parse_cputime("01:02:03") == 3723 and ps.parse_cputime("2-00:00:01") == 172801
    with pytest.raises(ParseError):
        ps.parse_cputime("soon")


FREE_H = """               total        used        free      shared  buff/cache   available
Mem:           449Gi        33Gi       130Mi       694Mi       416Gi       415Gi
Swap:             0B          0B          0B"""


def test_free_h_units() -> None:
    m = free.parse_free(FREE_H)
    assert m.total_bytes == 449 * GiB and m.available_bytes == 415 * GiB and m.free_bytes == 130 << 20
    assert m.swap_total_bytes == 0 and m.buff_cache_bytes == 416 * GiB


def test_free_plain_numbers_take_the_given_unit() -> None:
    text = """              total        used        free      shared  buff/cache   available
Mem:       16303940     5123456     1234567      123456    9945917    10800000"""
    assert free.parse_free(text).total_bytes == 16303940 * 1024
    assert free.parse_free(text, unit=1 << 20).total_bytes == 16303940 << 20


def test_free_old_layout_with_buffers_and_cached() -> None:
    text = """             total       used       free     shared    buffers     cached
Mem:          7983       7800        183          0        100       2000
-/+ buffers/cache:       5700       2283"""
    m = free.parse_free(text, unit=1 << 20)
    assert m.buff_cache_bytes == 2100 << 20 and not m.available_bytes  # Unavailable: old free has no column


@pytest.mark.parametrize("bad", ["total used free\n", "nothing", "  total used free\nMem: lots of it"])
def test_free_malformed_raises(bad: str) -> None:
    with pytest.raises(ParseError):
        free.parse_free(bad)


STATUS = """Name:\tpython3
Umask:\t0022
State:\tS (sleeping)
Tgid:\t46433
Pid:\t46433
PPid:\t46294
VmSize:\t91234567 kB
VmRSS:\t445644800 kB
RssAnon:\t 2097152 kB
RssFile:\t443547648 kB
RssShmem:\t    1024 kB
Threads:\t140
NSpid:\t46433\t17
voluntary_ctxt_switches:\t1234
nonvoluntary_ctxt_switches:\t56"""


def test_proc_status() -> None:
    p = proc_status.parse_proc_status(STATUS)
    assert (p.pid, p.ppid, p.name, p.state, p.threads) == (46433, 46294, "python3", "S", 140)
    assert p.rss_file_bytes == 443547648 * 1024 and p.rss_anon_bytes == 2097152 * 1024
    assert p.nspid == (46433, 17) and p.ctx_voluntary == 1234


@pytest.mark.parametrize("bad", ["Name: x", "Pid: abc\nState: S", "Pid: 1\nState: S\nVmRSS: lots kB"])
def test_proc_status_malformed(bad: str) -> None:
    with pytest.raises(ParseError):
        proc_status.parse_proc_status(bad)


PYSPY = """Process 101: python worker.py --rank 0
Python v3.10.12 (/usr/bin/python3.10)

Thread 101 (idle): "MainThread"
    all_reduce (torch/distributed/distributed_c10d.py:2050)
        Arguments:
            tensor: <Tensor at 0x7f>
        Locals:
            group: None
    step (train.py:40)
Thread 0x7F3A2B (active+gil): "pin_memory"
    0x7f3a2bcd (libc.so.6)
    _worker (pin.py:7)

Process 102: python worker.py --rank 1
Thread 102 (idle): "MainThread"
    all_reduce (torch/distributed/distributed_c10d.py:2050)
    step (train.py:40)
"""


def test_pyspy_text_several_processes() -> None:
    a, b = pyspy_text.parse_pyspy_text(PYSPY)
    assert (a.pid, b.pid, len(a.threads), len(b.threads)) == (101, 102, 2, 1)
    main, pin = a.threads
    assert main.name == "MainThread" and main.status == "idle" and main.tid == 101
    assert main.frames[0].function == "all_reduce" and main.frames[0].line == 2050
    assert main.frames[0].locals == {"tensor": "<Tensor at 0x7f>", "group": "None"}
    assert [f.function for f in main.frames] == ["all_reduce", "step"]
    assert pin.tid == 0x7F3A2B and pin.status == "gil" and pin.frames[0].native


@pytest.mark.parametrize("bad", ["", "Process 12: python\n", "    frame (x.py:1)\n"])
def test_pyspy_text_without_threads_raises(bad: str) -> None:
    with pytest.raises(ParseError):
        pyspy_text.parse_pyspy_text(bad)


FAULT = """rank 3 (PID 555) dumped:
Thread 0x00007f3a8c1ff640 (most recent call first):
  File "/usr/lib/python3.10/threading.py", line 324 in wait
  File "/app/loader.py", line 12 in run

Current thread 0x00007f3a9d4b5740 (most recent call first):
  File "/app/train.py", line 88 in barrier_wait
  File "/app/train.py", line 120 in <module>
"""


def test_faulthandler() -> None:
    (proc,) = faulthandler.parse_faulthandler(FAULT)
    assert proc.pid == 555 and len(proc.threads) == 2
    assert proc.threads[1].name == "MainThread" and proc.threads[1].frames[0].function == "barrier_wait"
    assert proc.threads[0].frames[0].file == "/usr/lib/python3.10/threading.py" and proc.threads[0].frames[0].line == 324


def test_faulthandler_malformed() -> None:
    with pytest.raises(ParseError):
        faulthandler.parse_faulthandler("Thread 0x1 (something else):\n  File x")


def test_log_levels_and_no_timing() -> None:
    tail = log_text.parse_log_text("INFO ok\nWARNING careful\nTraceback (most recent call last):\nRuntimeError: x\n")
    assert [ln.level for ln in tail.lines] == ["info", "warning", "traceback", "error"]
    assert not tail.seconds_since_last_byte  # Unavailable: a paste has no timing


def test_curl_refused_timeout_and_answer() -> None:
    refused = curl_text.parse_curl("* connect to 127.0.0.1 port 8000 failed: Connection refused\n")
    assert [(p.address, p.port, p.result) for p in refused] == [("127.0.0.1", 8000, "refused")]
    slow = curl_text.parse_curl("curl: (28) Failed to connect to node port 9000 after 5000 ms: Timeout was reached")
    assert slow[0].result == "timed out"
    ok = curl_text.parse_curl("* Connected to localhost (::1) port 8000 (#0)\n< HTTP/1.1 503 Service Unavailable\n")
    assert ok[0].result == "accepted" and ok[0].address == "::1" and "503" in ok[0].detail
    assert curl_text.parse_curl("nothing here") == []


def test_nvidia_smi_csv_with_header() -> None:
    text = """index, name, memory.used [MiB], utilization.gpu [%], power.draw [W], power.limit [W]
0, NVIDIA H100, 61234 MiB, 100 %, 112.30 W, 700.00 W
1, NVIDIA H100, 61234 MiB, [N/A], [N/A], 700.00 W"""
    a, b = nvidia_smi.parse_query_gpu_csv_with_header(text).devices
    assert a.memory_used_bytes == 61234 << 20 and a.utilization_gpu_percent == 100 and a.power_draw_w == 112.3
    assert not b.utilization_gpu_percent
    with pytest.raises(ParseError):
        nvidia_smi.parse_query_gpu_csv_with_header("index, name\n")  # no GPU figure named: not that CSV
    with pytest.raises(ParseError):
        nvidia_smi.parse_query_gpu_csv_with_header("index, name, memory.used [MiB]\n")  # a header without rows


def test_split_a_mixed_paste() -> None:
    text = ("Hi, the server hangs.\n\n```\n$ free -m\n" + FREE_H.replace("Gi", "").replace("Mi", "").replace("0B", "0")
            + "\n```\n\n" + PS_AUX + "\n" + PYSPY + "\n[812345.1] Out of memory: Killed process 46433 (python3)\n"
            + "\nthanks!\n")
    parts = split_paste(text)
    kinds = [p.kind for p in parts]
    assert kinds == ["text", "command", "free", "ps", "py-spy", "kernel", "text"]
    ev = evidence_from_paste(text)
    assert ev.snapshot.memory.system.total_bytes == 449 << 20  # `free -m` told the unit
    assert {p.pid for p in ev.snapshot.processes} == {46294, 46433}
    assert ev.snapshot.kernel.events[0].pid == 46433 and len(ev.stacks) == 2
    assert [p.used for p in ev.parts] == [True, False, True, True, True, True, False]
    assert ev.parts[0].used_as == "the symptom told in words (told-stall: seen, not why)"  # "the server hangs"


def test_a_part_that_fails_to_parse_is_reported_not_raised() -> None:
    ev = evidence_from_paste("              total        used        free\nMem:   lots   some   none\n")
    (part,) = ev.parts
    assert part.kind == "free" and not part.used and "could not parse" in part.note
    assert not ev.snapshot.memory.system.total_bytes


def test_pyspy_json_in_a_paste_goes_through_the_stacks_parser() -> None:
    import json

    def thread(pid: int, fn: str) -> dict:
        return {"pid": pid, "thread_id": pid, "thread_name": "MainThread", "os_thread_id": pid, "active": False,
                "owns_gil": False, "frames": [{"name": fn, "filename": "/x/torch/distributed/distributed_c10d.py",
                                               "module": None, "short_filename": "distributed_c10d.py", "line": 10,
                                               "locals": None}]}
    text = "py-spy dump --json:\n" + json.dumps([thread(1, "all_reduce"), thread(2, "all_reduce")], indent=1) + "\nbye\n"
    ev = evidence_from_paste(text)
    kinds = [(p.kind, p.used) for p in ev.parts]
    assert ("py-spy-json", True) in kinds and kinds[-1] == ("text", False)
    assert sorted(p.pid for p in ev.stacks) == [1, 2]
