"""The ninth pass (issue 15): shapes of real tools' output and one mechanism told in words that the seen sets show
(tests/corpus/cases .. cases-8) and no reader read, each on a fixture of real output and on the negative that
must not fire: strace's wait with no timeout, compute-sanitizer's synccheck barrier error, the kernel's OOM report
cut before its kill line, a job whose buffered output lags while it runs, kernels compiled at a first request.
"""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.prose_lexicon import scan_told
from triage_tui.parse.signal_lexicon import scan_line

from tests.unit.paste_diagnosis import ranked

FIXTURES = Path(__file__).parent / "fixtures" / "paste"


def _diag(text: str):
    return diagnose_text(text).diagnosis


def _causes(text: str) -> list[str]:
    return ranked(_diag(text), words=False)  # the word model apart


def _line_ids(line: str) -> set[str]:
    return {s.id for s in scan_line(line)}


def _told_ids(line: str) -> set[str]:
    return {s.id for s in scan_told(line)}


def test_strace_of_a_request_whose_answer_never_comes_is_a_network_wait() -> None:
    # real strace output (an asyncio client that sent a request to a loopback server that never answers)
    text = (FIXTURES / "strace_epoll_wait_forever.txt").read_text()
    assert "log-strace-wait-forever" in {o.id for o in _diag(text).observations}
    assert _causes(text)[:1] == ["network-wait"]
    # strace -p on a process blocked in a socket read: the call never returned while strace watched
    attached = (FIXTURES / "strace_attached_recvfrom.txt").read_text()
    assert _causes(attached)[:1] == ["network-wait"]


def test_an_strace_wait_with_a_timeout_is_no_wait_forever() -> None:
    assert "log-strace-wait-forever" not in _line_ids("epoll_wait(4, [], 2, 0)                 = 0")
    assert "log-strace-wait-forever" not in _line_ids("poll([{fd=5, events=POLLIN}], 1, 5000) = 0 (Timeout)")
    assert "log-strace-wait-forever" not in _line_ids("recvfrom(4, \"ok\", 10, 0, NULL, NULL) = 2")
    assert "log-strace-wait-forever" in _line_ids("[pid  4711] poll([{fd=5, events=POLLIN}], 1, -1 <unfinished ...>)")
    assert "log-strace-wait-forever" in _line_ids("select(8, [3 7], NULL, NULL, NULL) = 1 (in [7])")
    assert "log-strace-wait-forever" not in _line_ids("select(8, [3 7], NULL, NULL, {tv_sec=5, tv_usec=0}) = 0 (Timeout)")
    assert "log-strace-wait-forever" not in _line_ids("ppoll([{fd=3, events=POLLIN}], 1, {tv_sec=1, tv_nsec=0}, NULL, 8) = 0")


def test_compute_sanitizers_barrier_error_is_a_gpu_kernel_that_never_finishes() -> None:
    text = (FIXTURES / "compute_sanitizer_synccheck_barrier.txt").read_text()
    assert "log-sanitizer-barrier" in {o.id for o in _diag(text).observations}
    assert _causes(text)[:1] == ["gpu-hang"]
    assert "log-sanitizer-barrier" in _line_ids("========= Barrier error detected. Missing wait.")
    # memcheck's errors are a crash's evidence, not a barrier's
    assert "log-sanitizer-barrier" not in _line_ids("========= Invalid __global__ read of size 4 bytes")
    assert "log-sanitizer-barrier" not in _line_ids("========= ERROR SUMMARY: 0 errors")


def test_the_kernels_oom_report_cut_before_its_kill_line_is_memory_pressure() -> None:
    text = (FIXTURES / "dmesg_oom_report_cut.txt").read_text()
    assert "Killed process" not in text
    assert "log-oom-report" in {o.id for o in _diag(text).observations}
    assert _causes(text)[:1] == ["oom"]
    # the report's body alone (the paste cut its first and last lines)
    body = "\n".join(line for line in text.splitlines() if "invoked oom-killer" not in line and "Tasks" not in line)
    assert _causes(body)[:1] == ["oom"]
    assert "log-oom-report" not in _line_ids("[ 12.1] Memory: 16303244K/16776732K available (14339K kernel code)")
    assert "log-oom-report" not in _line_ids("MemFree:         1234567 kB")


def test_a_job_that_runs_while_its_buffered_output_lags_is_healthy_told_in_words() -> None:
    # the two ways the seen cases tell it (a Slurm job; a training console), reworded here
    ran = ("If I run the script directly on the node it works, but when run as a slurm job it freezes after "
           "initialization and outputs nothing more.")
    console = "I know training is working (the results folder has new logs) but the console hasn't shown anything."
    for words in (ran, console):
        assert "told-output-only-stale" in _told_ids(words), words
        assert _causes(words)[:1] == ["healthy"], words
    # a job that hangs as a batch job with an error, or a console that shows nothing because nothing runs: no
    assert "told-output-only-stale" not in _told_ids("It works directly, but as a slurm job it fails with an error.")
    assert "told-output-only-stale" not in _told_ids("The console hasn't shown anything and the GPU is idle.")


def test_kernels_compiled_at_the_first_request_are_a_compile() -> None:
    words = "The first request after boot compiles twelve Triton kernels during inference."
    assert "log-compiling" in _told_ids(words)
    assert _causes(words)[:1] == ["compiling"]
    assert "log-compiling" not in _told_ids("the model compiles fine and the kernels run")


def test_gpu_utility_quoted_in_prose_is_gpu_utilisation() -> None:
    # nvidia-smi's GPU-Util column, read aloud as "utility"
    d = _diag("When I run nccl across nodes the program hangs. `nvidia-smi` shows the GPU utility is always 100%.")
    assert "prose-gpu-busy" in {o.id for o in d.observations}
    assert _causes("nvidia-smi shows the GPU utility is always 100% while NCCL hangs")[:1] == ["collective-hang"]


def test_a_lock_cycle_told_with_the_debuggers_thread_numbers_is_a_deadlock() -> None:
    told = "thread 0 waits for threads to complete\nthread 1 is waiting for gc futex, locked by thread 0"
    assert "told-lock-cycle" in {o.id for o in _diag(told).observations}
    assert _causes(told)[:1] == ["deadlock"]
    assert "told-lock-cycle" in _told_ids("thread 2 is blocked on the mutex held by thread 1, and thread 1 waits for thread 2")
    # one thread waiting for another's lock, the holder running: no cycle told
    assert "told-lock-cycle" not in _told_ids("thread 1 is waiting for the lock held by thread 0, which is computing")


def test_a_cold_start_and_its_minutes_is_a_slow_load() -> None:
    words = "With the flag, full cold-start completes in ~12 minutes and inference is coherent."
    assert "log-loading" in _told_ids(words)
    assert _causes(words)[:1] == ["still-loading"]
    assert "log-loading" in _told_ids("model loading took 40 minutes on the first start")
    # a load that never ends is no slow load
    assert "log-loading" not in _told_ids("weight loading did not finish within 20 minutes")


def test_a_supervisor_that_kills_a_worker_over_its_memory_limit_is_memory_pressure() -> None:
    # as dask's nanny, Slurm's step daemon and Ray's memory monitor print it
    lines = (FIXTURES / "memory_limit_kills.txt").read_text().splitlines()
    for line in (lines[0], lines[3], lines[4]):
        assert "log-memory-limit-kill" in _line_ids(line), line
        assert _causes(line)[:1] == ["oom"], line
    assert "log-memory-limit-kill" not in _line_ids("distributed.worker - INFO - Memory: 8.00 GiB budget")


def test_gdb_py_bt_lock_lines_are_a_lock_in_memory_not_a_lock_file() -> None:
    # gdb's py-bt for a thread in a lock's acquire (cylc-flow#1823, as posted)
    for line in ("#1 Waiting for a lock (e.g. GIL)",
                 "#2 <built-in method acquire of thread.lock object at remote 0x7f0a16edb840>",
                 "#2 <built-in method acquire of _thread.lock object at remote 0x7f0a16edb840>"):
        assert "log-file-lock" not in _line_ids(line), line
    assert "log-file-lock" in _line_ids("Waiting for lock on /data/cache/model.lock")
    assert "log-file-lock" in _line_ids("filelock: Lock 140 not acquired on /root/.cache/x.lock")


def test_a_hang_that_an_nccl_transport_knob_avoids_is_a_collective_hang_in_that_transport() -> None:
    for words in ("It works with NCCL_P2P_DISABLE=1, but it hangs right after initialization.",
                  "Interestingly if I set NCCL_NVLS_ENABLE=0 the deadlock is not reproducing.",
                  "I worked around this problem by NCCL_LL_THRESHOLD=0."):
        assert "told-transport-knob" in _told_ids(words), words
        assert _causes(words)[:1] == ["collective-hang"], words
    # a knob set without saying that it helped, or one that is no transport
    assert "told-transport-knob" not in _told_ids("I run with NCCL_DEBUG=INFO and NCCL_P2P_DISABLE=1 set.")
    assert "told-transport-knob" not in _told_ids("Setting NCCL_DEBUG=INFO works and prints the rings.")


def test_strace_with_pids_and_times_before_the_call_is_read_the_same() -> None:
    # real `strace -f -tt` output: PID and wall-clock time before each call, a poll() with no timeout
    text = (FIXTURES / "strace_tt_poll_forever.txt").read_text()
    assert "log-strace-wait-forever" in {o.id for o in _diag(text).observations}
    assert _causes(text)[:1] == ["network-wait"]
    assert "log-strace-wait-forever" in _line_ids("1700000000.123456 epoll_wait(3, [], 16, -1) = 0")
    assert "log-strace-wait-forever" not in _line_ids("20:00:00.982637 poll([{fd=4, events=POLLIN}], 1, 100) = 0 (Timeout)")


def test_more_supervisors_and_the_memory_cgroups_report_line_are_memory_pressure() -> None:
    for line in ("Feb 15 17:10:20 d960 systemd-oomd[949]: Killed /user.slice/user-1000.slice/app.scope due to memory "
                 "pressure for /user.slice being 51.23% > 50.00% for > 20s with reclaim activity",
                 "Warning  Evicted  pod/minecraftg-fdf76df5c-r4nkh  The node was low on resource: memory. Container "
                 "minecraft was using 1924152Ki, which exceeds its request of 0."):
        assert "log-memory-limit-kill" in _line_ids(line), line
    assert "log-oom-report" in _line_ids("[ 801.1] memory: usage 1048576kB, limit 1048576kB, failcnt 1279")


def test_strace_killed_by_another_signal_is_no_sigkill() -> None:
    assert "log-killed" not in _line_ids("23085 19:59:55.080196 +++ killed by SIGINT +++")
    assert "log-killed" in _line_ids("+++ killed by SIGKILL +++")


# cgroup v2's cpu.stat as the kernel prints it (keys of kernel/cgroup/rstat.c and kernel/sched/core.c)
CPU_STAT = """\
$ cat /sys/fs/cgroup/cpu.stat
usage_usec 81234567
user_usec 70001234
system_usec 11233333
nr_periods 50012
nr_throttled 43210
throttled_usec 901234567
"""


def test_a_cpu_limit_below_a_core_or_a_throttled_cgroup_is_cpu_starvation() -> None:
    assert "log-cpu-limited" in {o.id for o in _diag(CPU_STAT).observations}
    assert _causes(CPU_STAT)[:1] == ["cpu-starved"]
    for line in ("The app is currently CPU bound (currently we're at 0.5 vCPUs).", "docker run --cpus=0.5 app",
                 "resources: limits: cpu: 500m"):
        assert "log-cpu-limited" in _line_ids(line), line
    for line in ("nr_throttled 0", "throttled_usec 0", "we have 2.5 CPUs free", "16 vCPUs, 64 GB"):
        assert "log-cpu-limited" not in _line_ids(line), line


def test_a_memory_figure_that_counts_shared_pages_twice_is_told_healthy() -> None:
    for words in ("usage_request should probably use PSS instead of RSS. As RSS overestimates due to copy-on-write.",
                  "the summed RSS double-counts the pages the forked children share with the parent"):
        assert "told-memory-overcounted" in _told_ids(words), words
        assert _causes(words)[:1] == ["healthy"], words
    assert "told-memory-overcounted" not in _told_ids("RSS grows by 2 GB an hour until the OOM killer fires")


def test_a_hang_that_another_kernel_implementation_avoids_is_a_gpu_kernel_hang() -> None:
    for words in ("The workaround for now is using triton kernel for the prefill: --gdn-prefill-backend triton",
                  "It no longer hangs with VLLM_ATTENTION_BACKEND=XFORMERS"):
        assert "told-kernel-swap" in _told_ids(words), words
        assert _causes(words)[:1] == ["gpu-hang"], words
    # a backend that is no GPU kernel (the executor), or a kernel named without a fix
    assert "told-kernel-swap" not in _told_ids("it works with --distributed-executor-backend ray")
    assert "told-kernel-swap" not in _told_ids("we use the triton backend for the prefill")
