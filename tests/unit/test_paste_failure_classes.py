"""The failure classes behind the held-out misses of issue 15, each on real output (tests/unit/fixtures/paste/):
a faulthandler timeout dump that lost its indentation, a store-based barrier timeout, NCCL_DEBUG=INFO output with
no error, PCIe AER and an unreachable GPU, a profiler that left its target stopped, OOM told in words, and a
library hint that lists causes without stating one.

Fixtures captured here: faulthandler_filebaton_timeout.txt (torch's FileBaton on a lock file left behind, under
faulthandler.dump_traceback_later), store_based_barrier_timeout.txt (torch 2.13, TORCH_DIST_INIT_BARRIER=1, one of
two ranks started), pyspy_condition_enter.txt (a thread blocked entering a Condition another thread holds),
ps_rows_without_header.txt (`ps aux | grep` and `ps -eo ... | awk`, one process stopped). Fixtures copied from
public threads (the output as posted): SOURCES below.
"""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.faulthandler import parse_faulthandler
from triage_tui.parse.paste_split import split_paste
from triage_tui.parse.signal_lexicon import scan_line

from tests.unit.paste_diagnosis import ranked

FIX = Path(__file__).parent / "fixtures" / "paste"
SOURCES = {  # fixture: the thread it was copied from
    "nccl_info_only_hang.txt": "https://github.com/NVIDIA/nccl-tests/issues/117",
    "nccl_info_benign_warn.txt": "https://github.com/NVIDIA/nccl/issues/257",
    "pcie_aer_fatal_xid79.txt": "https://github.com/wilicc/gpu-burn/issues/1",
    "pcie_aer_reltime_cant_recover.txt": "https://github.com/rwth-i6/returnn/issues/1500",
    "pcie_aer_corrected_only.txt": "https://github.com/pop-os/pop/issues/3363",
    "nvidia_smi_unreachable.txt": "https://github.com/NVIDIA/nvidia-docker/issues/1553",
    "pyspy_left_stopped_ps.txt": "https://github.com/benfred/py-spy/issues/390",
    # after the third held-out set was scored once (its cases are seen from then on)
    "nvrm_rminitadapter_failed.txt": "https://github.com/Cyridd/cmpunlocker/issues/4",
    "nccl_coll_count_mismatch.txt": "https://github.com/NVIDIA/nccl/issues/147",
    "python_fork_threads_warning.txt": "https://github.com/OpenHands/benchmarks/pull/459",
    # after the fourth held-out set was scored once (its cases are seen from then on)
    "tokenizers_fork_warning.txt": "https://github.com/alex-hh/profam/issues/39",
    "nccl_shm_segment_failed.txt": "https://github.com/NVIDIA/nccl/issues/290",
    "cuda_gdb_kernel_frame.txt": "https://github.com/cms-sw/cmssw/issues/37323",
}


def _diag(name: str):
    return diagnose_text((FIX / name).read_text()).diagnosis


def _causes(name: str) -> list[str]:
    return [h.id for h in _diag(name).hypotheses if h.score > 0 and h.status != "ruled out"]


def _ids(name: str) -> set[str]:
    return {o.id for o in _diag(name).observations}


def test_every_copied_fixture_names_its_thread() -> None:
    for name, url in SOURCES.items():
        assert (FIX / name).is_file() and url.startswith("https://github.com/"), name


def test_a_faulthandler_timeout_dump_is_read_with_and_without_its_indentation() -> None:
    text = (FIX / "faulthandler_filebaton_timeout.txt").read_text()
    (proc,) = parse_faulthandler(text)
    assert [f.function for f in proc.threads[0].frames] == ["wait", "<module>"]
    assert _causes("faulthandler_filebaton_timeout.txt")[0] == "stale-file-lock"
    # as an issue body often shows it: indentation gone, the thread line cut
    flat = "\n".join(ln.strip() for ln in text.splitlines() if not ln.startswith("Thread 0x"))
    parts = diagnose_text(flat).parts
    assert [p.kind for p in parts if p.used] == ["faulthandler"]
    assert diagnose_text(flat).diagnosis.hypotheses[0].id == "stale-file-lock"


def test_faulthandler_frames_are_not_taken_from_a_python_traceback() -> None:
    # a traceback writes `line N, in f`; faulthandler `line N in f`: the comma keeps them apart
    tb = 'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nValueError: no'
    assert [p.kind for p in split_paste(tb)] == ["traceback"]


def test_a_store_based_barrier_timeout_is_a_rank_that_never_arrived_not_the_network() -> None:
    causes = _causes("store_based_barrier_timeout.txt")
    assert causes[0] == "wait-for-missing-rank"
    assert "network-wait" not in causes
    # torch's `[rank0]:` prefix is removed, so the traceback reads as one
    assert "traceback" in {p.kind for p in diagnose_text((FIX / "store_based_barrier_timeout.txt").read_text()).parts}


def test_nccl_info_lines_and_nothing_else_are_a_collective_hang_with_several_communicators() -> None:
    for name in ("nccl_info_only_hang.txt", "nccl_info_benign_warn.txt"):
        assert _causes(name)[:1] == ["collective-hang"], name
        assert "log-several-ranks" in _ids(name), name
    # a missing optional plugin is a WARN NCCL recovers from, not an NCCL error
    assert "log-nccl-error" not in _ids("nccl_info_benign_warn.txt")
    assert [s.id for s in scan_line("host:1:1 [0] transport/net_ib.cc:9 NCCL WARN NET/IB : Got completion with error 12")] \
        == ["log-nccl-error"]


def test_nccl_info_lines_beside_a_death_are_not_read_as_a_hang() -> None:
    text = (FIX / "nccl_info_only_hang.txt").read_text() + "\nRuntimeError: CUDA error: out of memory\n"
    assert diagnose_text(text).diagnosis.hypotheses[0].id == "oom"


def test_pcie_aer_and_an_unreachable_gpu_are_a_lost_gpu_never_shared_memory() -> None:
    for name in ("pcie_aer_fatal_xid79.txt", "pcie_aer_reltime_cant_recover.txt", "nvidia_smi_unreachable.txt"):
        causes = _causes(name)
        assert causes[0] == "gpu-lost", (name, causes)
        assert "shm-exhausted" not in causes, name
    # dmesg -H relative stamps are kernel lines
    assert [p.kind for p in split_paste((FIX / "pcie_aer_reltime_cant_recover.txt").read_text())] == ["kernel"]
    # "PCIe Bus Error" is no SIGBUS; corrected errors alone are weak (noise on many machines)
    assert "log-sigbus" not in _ids("pcie_aer_corrected_only.txt")
    weak = _diag("pcie_aer_corrected_only.txt").hypotheses[0]
    assert weak.id == "gpu-lost" and weak.status == "unlikely"


def test_a_profiler_that_left_its_target_stopped() -> None:
    assert _causes("pyspy_left_stopped_ps.txt")[0] == "stopped"  # ps shows T
    said = "Turns out py-spy gets into a hot loop and keeps the process blocked; killing the py-spy unblocked it."
    assert diagnose_text(said).diagnosis.hypotheses[0].id == "stopped"
    assert not scan_line("I attached gdb and the training keeps going")


def test_oom_told_in_words_counts_even_beside_a_free_taken_after() -> None:
    text = ("              total        used        free      shared  buff/cache   available\n"
            "Mem:          1.0Ti        38Gi       966Gi       278Mi       2.8Gi       966Gi\n\n"
            "The job gets OOM-killed after the third epoch.\n")
    assert diagnose_text(text).diagnosis.hypotheses[0].id == "oom"
    for line in ("Reason: OOMKilled", "ran out of CPU memory", "the oom-killer took it"):
        assert "log-oom-words" in {s.id for s in scan_line(line)}, line
    assert not scan_line("the room was full")


def test_a_hint_that_lists_possible_causes_states_none_of_them() -> None:
    ray = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker exit type: "
           "SYSTEM_ERROR Some common causes include: (1) the process was killed by the OOM killer due to high memory "
           "usage, (2) ray stop --force was called, or (3) the worker crashed unexpectedly due to SIGSEGV")
    ids = {s.id for s in scan_line(ray)}
    assert "log-worker-exited" in ids and "log-oom-words" not in ids and "log-killed" not in ids
    assert "log-killed" in {s.id for s in scan_line("RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.")}


def test_a_worker_killed_by_sigkill_ranks_oom_first() -> None:
    text = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 2410412) of "
            "binary: /usr/bin/python\n")
    causes = _causes_of(text)
    assert causes[:2] == ["oom", "crashed-worker"], causes


def test_a_launcher_command_line_naming_its_master_is_no_rendezvous_wait() -> None:
    assert not {s.id for s in scan_line("cmd = python -u -m deepspeed.launcher.launch --master_addr=127.0.0.1 "
                                        "--master_port=29500 main.py")} & {"log-rendezvous"}
    assert "log-rendezvous" in {s.id for s in scan_line("waiting: MASTER_ADDR is 10.0.0.1 and nothing answers")}


def _causes_of(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


# --- classes the third held-out set showed (added after it was scored once)
def test_ps_rows_whose_header_a_pipe_removed_are_read_with_the_command_lines_columns() -> None:
    parts = diagnose_text((FIX / "ps_rows_without_header.txt").read_text()).parts
    used = [p for p in parts if p.kind == "ps"]
    assert len(used) == 2 and all(p.used and "header taken from the command line" in p.used_as for p in used)
    assert _causes("ps_rows_without_header.txt")[0] == "stopped"  # the -o row: PID 23555 in T
    from triage_tui.parse.ps import header_from_command

    assert header_from_command("sudo ps -eopid,state,wchan:32,cmd | awk '$2 ~ /D/'") == "PID S WCHAN CMD"
    assert header_from_command("ps aux | grep x").split()[:3] == ["USER", "PID", "%CPU"]
    assert header_from_command("ls -l") is None and header_from_command("ps -o pid,bogus") is None


def test_a_thread_blocked_entering_a_condition_waits_on_a_lock() -> None:
    diag = _diag("pyspy_condition_enter.txt")
    assert "stacks-one-lock" in {o.id for o in diag.observations}
    assert diag.hypotheses[0].id == "deadlock"


def test_nvrm_adapter_failures_are_a_lost_gpu() -> None:
    assert _causes("nvrm_rminitadapter_failed.txt")[0] == "gpu-lost"


def test_nccl_collective_lines_that_disagree_between_ranks_are_a_mismatch() -> None:
    diag = _diag("nccl_coll_count_mismatch.txt")
    assert diag.hypotheses[0].id == "collective-mismatch", [h.id for h in diag.hypotheses[:3]]
    # the same lines with one count everywhere are no mismatch
    same = (FIX / "nccl_coll_count_mismatch.txt").read_text().replace("count 25503912 datatype 6", "count 53 datatype 4")
    assert "log-collective-mismatch" not in {o.id for o in diagnose_text(same).diagnosis.observations}


def test_pythons_fork_warning_names_an_inherited_lock() -> None:
    assert _causes("python_fork_threads_warning.txt")[0] == "fork-inherited-lock"


def test_compile_time_and_a_stale_lock_told_in_prose() -> None:
    assert _causes_of("Torch compile and Cudagraph capture took too much time: the startup takes 45 minutes.")[0] \
        == "compiling"
    said = ("If a first build is killed part-way (OOM-killer, cgroup pids limit), the stale `lock` file remains, and "
            "every later import hangs forever.")
    assert _causes_of(said)[0] == "stale-file-lock"  # a sentence that supposes an OOM kill states none


# --- classes the fourth held-out set showed (added after it was scored once)
def test_nccls_own_shared_memory_failure_is_a_full_dev_shm_not_a_transport_hang() -> None:
    causes = _causes("nccl_shm_segment_failed.txt")
    assert causes[0] == "shm-exhausted", causes


def test_a_gpu_kernel_that_never_finishes() -> None:
    assert _causes("cuda_gdb_kernel_frame.txt")[0] == "gpu-hang"  # cuda-gdb: the thread is inside kernel<<<...>>>
    for said in ("EngineCore blocks forever in copy_event.synchronize() when a GPU kernel never terminates",
                 "正常跑了7-8个小时，突然卡住在 torch.cuda.current_stream().synchronize()\ngpu 利用率100%，程序无法执行"):
        assert _causes_of(said)[0] == "gpu-hang", said
    assert not scan_line("NVIDIA Open GPU Kernel Modules Version 530.41.03")


def test_the_tokenizers_fork_warning_names_an_inherited_lock() -> None:
    assert _causes("tokenizers_fork_warning.txt")[0] == "fork-inherited-lock"


def test_a_barrier_one_rank_never_reaches_and_nccl_that_hangs_where_gloo_works() -> None:
    assert _causes_of("Training hangs in the end while calling dist.barrier()")[0] == "wait-for-missing-rank"
    assert _causes_of("dist.all_reduce is stuck with backend `nccl`, but works with `gloo`")[0] == "collective-hang"


def test_a_zombie_in_ps_ef_is_read_from_its_defunct_command() -> None:
    # ps -ef (and docker top) print no STAT column: `[python3] <defunct>` is the only sign of a zombie, captured here
    # from a child whose parent never reaped it, with and without the header a grep removes
    diag = _diag("ps_ef_defunct.txt")
    ids = [o.id for o in diag.observations]
    assert ids.count("zombie") == 1 and "all-alive" not in ids
    assert diag.hypotheses[0].id == "crashed-worker" and "healthy" not in _causes("ps_ef_defunct.txt")


# ---- the sixth pass (#15): kinds of paste that read nothing at all. Fixtures: pyspy_top_spinning_thread.txt
# (`py-spy top` 0.4.3 on a real process, one thread spinning and one blocked on a lock, its screen as copied),
# proc_stack_futex.txt (`cat /proc/PID/stack` of a real thread blocked on a threading.Lock), and
# vscode_call_stack_sem_wait.txt (a debugger front end's `module!function(args) (file:line)` call stack, as
# posted in https://github.com/kc-ml2/jorldy/issues/28).
def test_py_spy_top_reads_as_a_flat_profile_and_yields_a_cause() -> None:
    from triage_tui.parse.pyspy_top import parse_pyspy_top

    text = (FIX / "pyspy_top_spinning_thread.txt").read_text()
    (proc,) = parse_pyspy_top(text)
    assert [t.frames[0].function for t in proc.threads] == ["spin"]  # rows under 5 % own time are no thread
    assert proc.threads[0].status == "active" and proc.threads[0].frames[0].file == "waiter.py"
    parts = diagnose_text(text).parts
    assert [p.kind for p in parts if p.used] == ["py-spy-top"]
    ranked = [h.id for h in diagnose_text(text).diagnosis.hypotheses if h.score > 0]
    assert ranked[:1] == ["busy-loop"]


def test_a_pasted_proc_pid_stack_is_a_kernel_wait_of_that_pid() -> None:
    from triage_tui.parse.kernel_stack import parse_kernel_stack

    text = (FIX / "proc_stack_futex.txt").read_text()
    (proc,) = parse_kernel_stack(text, "cat /proc/17060/stack")
    assert proc.pid == 17060 and proc.threads[0].kernel_wchan == "futex_do_wait"
    assert len(proc.threads[0].kernel_stack) == 7
    result = diagnose_text(text)
    assert [p.kind for p in result.parts if p.used] == ["kernel-stack"]
    assert "PID 17060" in next(p.used_as for p in result.parts if p.used)
    assert any(h.id == "deadlock" and h.score > 0 for h in result.diagnosis.hypotheses)


def test_an_nfs_wait_is_named_by_the_frame_below_the_rpc_helper() -> None:
    from triage_tui.diagnose.stack_groups import _classified
    from triage_tui.parse.kernel_stack import parse_kernel_stack

    text = ("[<ffffffffc05e2a35>] rpc_wait_bit_killable+0x25/0xb0 [sunrpc]\n"
            "[<ffffffffc06a1c0e>] nfs4_do_close+0x2ee/0x3a0 [nfsv4]\n")
    (proc,) = parse_kernel_stack(text)
    assert _classified(proc.threads[0]).wait_kind == "file-io"


def test_a_debugger_front_ends_module_bang_function_frames_are_a_stack() -> None:
    from triage_tui.parse.gdb_text import parse_gdb

    text = (FIX / "vscode_call_stack_sem_wait.txt").read_text()
    (proc,) = parse_gdb(text)
    frames = proc.threads[0].frames
    assert [f.function for f in frames] == ["futex_abstimed_wait_cancelable", "do_futex_wait", "__new_sem_wait_slow"]
    assert frames[0].module == "libpthread.so.0" and frames[1].line == 111 and frames[1].file.endswith("sem_waitcommon.c")
    result = diagnose_text("Attaching GDB to the process after the hang\n" + text)
    assert [p.kind for p in result.parts if p.used] == ["text", "gdb"]  # "after the hang": the symptom told
    assert "told-stall" in result.parts[0].used_as
    assert any(h.score > 0 for h in result.diagnosis.hypotheses)


def test_no_space_in_a_container_with_dockers_default_shm_is_shm_exhausted() -> None:
    # as posted in NVIDIA/Megatron-LM#878 (the line and the command line, verbatim)
    text = ("OSError: [Errno 28] No space left on device\n\nyes, I run it in docker.\n"
            "`docker run -it --name zhaomegatron -v /jfs/yuzhe.zhao:/home/zyz --gpus all nvcr.io/nvidia/pytorch:23.09-py3`\n")
    ranked = [h.id for h in diagnose_text(text).diagnosis.hypotheses if h.score > 0]
    assert ranked[:1] == ["shm-exhausted"]
    # the same failure in a container given a bigger /dev/shm (or the host's): the disk, not shared memory. No
    # hand-written row ranks shm-exhausted there; since the nineteenth pass (the mined phrases count wherever no other
    # evidence ranks a cause) the phrases it shares with seen shm cases may, at their weight only ("unlikely"), and since
    # the twenty-second pass the word model too
    for flag in ("--shm-size=16g", "--ipc=host"):
        other = text.replace("--gpus all", f"--gpus all {flag}")
        for h in diagnose_text(other).diagnosis.hypotheses:
            if h.id == "shm-exhausted" and h.score > 0:
                assert h.status == "unlikely" and all(e.observation.startswith(("told-phrase-", "told-words-"))
                                                      for e in h.evidence if e.weight > 0), [e.observation for e in h.evidence]
    assert [s.id for s in scan_line("OSError: [Errno 28] No space left on device")] == ["log-no-space"]


def test_mmap_weight_loading_and_major_faults_read_as_io_blocked() -> None:
    # Ascend/sglang#408 and sgl-project/sglang#37806 (as posted)
    for line in ("The process seems to get stuck while performing mmap lazy loading of the model weights.",
                 "| major page faults | **369,655** | **38** |"):
        assert "log-mmap-load" in [s.id for s in scan_line(line)], line
        ranked = [h.id for h in diagnose_text(line).diagnosis.hypotheses if h.score > 0]
        assert ranked[:1] == ["io-blocked"], (line, ranked)
    assert not scan_line("we load the checkpoint with torch.load and it works")


def test_a_result_call_that_hangs_is_a_result_nobody_completes() -> None:
    line = "fs.result() hangs forever when the submitted function raises"
    assert [s.id for s in scan_line(line)] == ["log-result-hangs"]
    assert [h.id for h in diagnose_text(line).diagnosis.hypotheses if h.score > 0][:1] == ["event-never-fires"]
    assert not [s for s in scan_line("fs.result() returned 42") if s.id == "log-result-hangs"]


def test_a_bang_in_prose_is_no_debugger_frame() -> None:
    from triage_tui.parse.paste_split import split_paste

    assert [p.kind for p in split_paste("Wow!great(really) it works\n")] == ["text"]
    assert [p.kind for p in split_paste("python3.10!_PyEval_EvalFrameDefault(PyThreadState * tstate) (ceval.c:4181)\n")] == ["gdb"]
