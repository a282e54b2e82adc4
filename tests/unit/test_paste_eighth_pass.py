"""The eighth pass (issue 15): formats of real tools that the seen sets show and no reader read, each on the text as
posted in a seen case (tests/corpus/cases-7, seen since its one scoring) and checked on the other seen cases they
fire on: a network filesystem's RPC wait in a kernel stack, a refused connect(), NCCL's system-call failure.
"""

from __future__ import annotations

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.signal_lexicon import scan_line


def _diag(text: str):
    return diagnose_text(text).diagnosis


def _causes(text: str) -> list[str]:
    return [h.id for h in _diag(text).hypotheses if h.score > 0 and h.status != "ruled out"]


def _ids(text: str) -> set[str]:
    return {o.id for o in _diag(text).observations}


# https://github.com/cea-hpc/robinhood/issues/111 (a Lustre client's scan thread), as posted
LUSTRE_STACK = """\
 cat /proc/5071/task/5099/stack
[<ffffffffc1191a80>] ptlrpc_set_wait+0x480/0x790 [ptlrpc]
[<ffffffffc1191e13>] ptlrpc_queue_wait+0x83/0x230 [ptlrpc]
[<ffffffffc1361f66>] mdc_xattr_common+0x3f6/0x680 [mdc]
[<ffffffffc1362262>] mdc_getxattr+0x72/0x360 [mdc]
[<ffffffffc0d6cd5b>] lmv_getxattr+0x15b/0x360 [lmv]
[<ffffffffc13e2ce0>] ll_xattr_list+0x240/0x670 [lustre]
[<ffffffff81872f92>] generic_getxattr+0x52/0x70
[<ffffffff81863492>] d_instantiate+0x52/0x70
"""

# the sixth pass's NFS fixture shape (sunrpc under nfs4): the same mechanism, another filesystem
NFS_STACK = """\
$ cat /proc/4242/stack
[<0>] rpc_wait_bit_killable+0x25/0xb0 [sunrpc]
[<0>] __rpc_execute+0x14e/0x430 [sunrpc]
[<0>] rpc_run_task+0x151/0x190 [sunrpc]
[<0>] nfs4_call_sync_sequence+0x64/0xa0 [nfsv4]
[<0>] _nfs4_proc_getattr+0x11b/0x140 [nfsv4]
"""

# a local disk's wait: file I/O, but no network filesystem
LOCAL_STACK = """\
$ cat /proc/4243/stack
[<0>] io_schedule+0x16/0x40
[<0>] folio_wait_bit_common+0x13e/0x360
[<0>] filemap_fault+0x5f2/0x9c0
"""


def test_a_kernel_stack_in_a_network_filesystems_rpc_wait_is_blocked_io() -> None:
    for text, frame in ((LUSTRE_STACK, "ptlrpc_set_wait"), (NFS_STACK, "rpc_wait_bit_killable")):
        d = _diag(text)
        obs = [o for o in d.observations if o.id == "stacks-netfs-rpc"]
        assert obs and obs[0].figures["frame"] == frame
        assert _causes(text)[:1] == ["io-blocked"]
        top = d.hypotheses[0]
        assert any("network filesystem" in line for line in top.for_)
    # a local disk's page wait is file I/O (still-loading leads), never a network filesystem's RPC
    assert "stacks-netfs-rpc" not in _ids(LOCAL_STACK)


# https://github.com/pytorch/pytorch/issues/15592, as posted (node 2 of two; node 0 waits for it)
GLOO_REFUSED = """\
terminate called after throwing an instance of 'gloo::IoException'
  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused
Aborted (core dumped)
"""


def test_a_refused_connect_is_a_network_wait() -> None:
    assert "log-connect-refused" in {s.id for s in scan_line(GLOO_REFUSED.splitlines()[1])}
    assert "log-connect-refused" in {s.id for s in scan_line(
        "ConnectionRefusedError: [Errno 111] Connection refused")}
    assert _causes(GLOO_REFUSED)[:1] == ["network-wait"]
    assert "log-connect-refused" not in {s.id for s in scan_line("connection reset by peer")}


# https://github.com/NVIDIA/nccl/issues/473 (nccl-tests and a model, in a container), as posted
NCCL_SYSTEM_ERROR = """\
fastmoe: Test NCCL failure common.cu:777 'unhandled system error'

RuntimeError: NCCL Error 2: unhandled system error
"""


def test_ncclsystemerror_counts_for_a_full_dev_shm_above_a_crash() -> None:
    assert _causes(NCCL_SYSTEM_ERROR)[:1] == ["shm-exhausted"]
    # it is no proof: the score stays below the rows that see /dev/shm itself fail
    d = _diag(NCCL_SYSTEM_ERROR)
    assert next(h for h in d.hypotheses if h.id == "shm-exhausted").score < 0.6


def test_a_py_spy_dump_pasted_as_an_indented_block_with_elisions_keeps_its_frames() -> None:
    from pathlib import Path

    from triage_tui.parse.pyspy_text import parse_pyspy_text

    real = (Path(__file__).parent / "fixtures" / "paste" / "pyspy_deadlock.txt").read_text()  # a real py-spy dump
    whole = parse_pyspy_text(real)
    # as Markdown keeps it (four spaces before every line), with a poster's `...` where frames were cut
    lines = real.splitlines()
    cut = "\n".join("    " + ln if ln else ln for ln in lines[:5] + ["    ..."] + lines[6:])
    pasted = parse_pyspy_text(cut)
    assert [p.pid for p in pasted] == [p.pid for p in whole]
    assert [t.name for t in pasted[0].threads] == ["MainThread", "first", "second"]
    main_whole, main_cut = whole[0].threads[0].frames, pasted[0].threads[0].frames
    assert [f.function for f in main_cut] == [main_whole[0].function, main_whole[2].function]
    assert main_cut[0].file == "threading.py" and main_cut[0].line == 1139
    # the locals under a frame stay locals, not frames, in an indented paste
    assert all(not f.function.endswith(":") for t in pasted[0].threads for f in t.frames)


# https://github.com/anoniemerd/PruneMate/issues/29, as posted: the dump is an indented block, frames cut with `...`
GUNICORN_DUMP = """\
py-spy dump of the frozen worker process:
    Thread 9 (active): "MainThread"
        emit (logging/__init__.py:1163)
        handle (logging/__init__.py:1028)
        ...
        spawn_worker (gunicorn/arbiter.py:704)

The worker is permanently stuck inside Python's logging module while gunicorn's arbiter logs "Booting worker with pid: ...".
"""


def test_a_forked_child_stuck_inside_logging_is_a_lock_inherited_across_fork() -> None:
    d = _diag(GUNICORN_DUMP)
    obs = [o for o in d.observations if o.id == "stacks-fork-lock"]
    assert obs and "spawn_worker" in obs[0].text and "emit" in obs[0].text
    assert _causes(GUNICORN_DUMP)[:1] == ["fork-inherited-lock"]
    # the same frames in a process that was not forked are logging at work, no inherited lock
    unforked = GUNICORN_DUMP.replace("spawn_worker (gunicorn/arbiter.py:704)", "main (app.py:12)")
    assert "stacks-fork-lock" not in _ids(unforked)


def test_an_ipython_traceback_is_read_as_a_python_stack() -> None:
    """Real IPython 8 output (fixtures/paste/ipython_interrupted_lock.txt): `ipython -c` running
    programs/ipython_stuck_lock.py, interrupted with SIGINT while its thread waits on a lock it holds."""
    from pathlib import Path

    from triage_tui.parse.interrupted_traceback import interrupted_stacks

    text = (Path(__file__).parent / "fixtures" / "paste" / "ipython_interrupted_lock.txt").read_text()
    (proc,) = interrupted_stacks(text)
    frames = proc.threads[0].frames
    assert [(f.function, f.line) for f in frames] == [("take_twice", 7), ("<module>", 1)]
    assert frames[0].file.endswith("stuck_lock.py") and frames[0].code.startswith("lock.acquire()")
    assert _causes(text)[:1] == ["deadlock"]
    # the same frames under a header that names a failure are a failure's, not a stack
    failed = text.replace("KeyboardInterrupt      ", "RuntimeError           ").replace("KeyboardInterrupt: ", "RuntimeError: x")
    assert interrupted_stacks(failed) == ()


# https://github.com/AnswerDotAI/RAGatouille/issues/245, as posted (cut at both ends, the words say it is interrupted)
RAGATOUILLE = """\
My `RAG.search` and `RAG.index` are seemingly stuck on loading the packbits_cpp extension. If I interrupt my kernel, I see that Torch baton is blocking:

```python
File ~/miniconda3/envs/llama/lib/python3.11/site-packages/colbert/indexing/codecs/residual.py:118, in ResidualCodec.try_load_torch_extensions(cls, use_gpu)
    117 print_message(f"Loading packbits_cpp extension (set COLBERT_LOAD_TORCH_EXTENSION_VERBOSE=True for more info)...")
--> 118 packbits_cpp = load(
    119     name="packbits_cpp",

File ~/miniconda3/envs/llama/lib/python3.11/site-packages/torch/utils/cpp_extension.py:1312, in load(name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags,
```
"""


def test_an_ipython_stack_in_cpp_extension_load_with_a_blocking_baton_is_a_stale_lock_file() -> None:
    result = diagnose_text(RAGATOUILLE)
    (proc,) = result.stacks.processes
    assert [f.function for f in proc.threads[0].frames] == ["load", "ResidualCodec.try_load_torch_extensions"]
    assert proc.threads[0].frames[1].code == "packbits_cpp = load("
    assert any("IPython traceback" in p.used_as for p in result.parts)
    assert _causes(RAGATOUILLE)[:1] == ["stale-file-lock"]
    # the stack alone is torch building the extension: compiling, until the words name the baton
    assert _causes(RAGATOUILLE.replace("I see that Torch baton is blocking", "I see this"))[:1] == ["compiling"]


# the seen cases' words, as posted (cases-7)
MS_SWIFT = "使用swift训练的时候 loading checkpoint 需要30分钟，直接使用transforms 加载很快。"  # modelscope/ms-swift#7058
VLLM_LOOP = ("3. Continue sending new requests with **different images**. When `EngineCore` triggers the multimodal cache "
             "eviction/reclamation process, it falls into an infinite loop, causing the service to hang and all subsequent "
             "requests to time out.")  # vllm-project/vllm#43941
HY2DL = ("When I looked at the processes with `htop`, each DataLoader worker was using more than 140% CPU, which suggested "
         "the workers were each spawning multiple internal threads")  # eduardoAcunaEspinoza/Hy2DL#48
MARIN = """\
The barrier after checkpoint restore used `multihost_utils.sync_global_devices`, a pjit'd
device allgather with no timeout. On 2026-08-21 one rank of the 704-process EP hero stalled
in its TensorStore read and the other 175 tasks waited at that barrier for 4h34m past the
point where they had all finished reading, with no error and no log output, before the read
completed on its own.
"""  # marin-community/marin#8538


def test_a_load_phase_and_its_duration_in_english_or_chinese_is_still_loading() -> None:
    assert _causes(MS_SWIFT)[:1] == ["still-loading"]
    assert _causes("Loading checkpoint shards takes 25 minutes on every restart")[:1] == ["still-loading"]
    assert _causes("在H20上加载模型要半小时")[:1] == ["still-loading"]
    assert "log-loading" not in _ids("loading checkpoint is fast, 加载很快")


def test_an_infinite_loop_and_thread_oversubscription_told_in_words() -> None:
    assert _causes(VLLM_LOOP)[:1] == ["busy-loop"]
    assert _causes("服务进入死循环，CPU 一直 100%")[:1] == ["busy-loop"]
    # a GPU kernel's infinite loop is the GPU's: the CPU row stays out
    assert _causes("the CUDA kernel hangs in an infinite loop")[:1] == ["gpu-hang"]
    assert _causes(HY2DL)[:1] == ["cpu-starved"]


def test_the_other_n_tasks_that_waited_for_one_rank_is_a_missing_rank() -> None:
    assert _causes(MARIN)[:1] == ["wait-for-missing-rank"]


def test_a_person_who_killed_the_job_is_no_sigkill() -> None:
    # deepmd-kit#5117, as posted: the author stopped a job stuck for 20 hours
    text = ("sometimes lasted for even 20 hours (I don't know what will happen after 20 hours as I just killed the job "
            "then), and while it stucked, no outputs were produced")
    assert "log-killed" not in _ids(text)
    assert "log-killed" in {s.id for s in scan_line("[rank3]: worker 4121 was killed")}
    assert "log-killed" in {s.id for s in scan_line("Killed")}


def test_a_hang_only_with_dataloader_workers_counts_for_an_inherited_lock() -> None:
    # albumentations#1825, as posted
    text = ("Data loading does not start when `num_workers > 0` in 1.4.10, the terminal just hangs and there are no "
            "running processes.")
    assert _causes(text)[:1] == ["fork-inherited-lock"]
    assert "told-workers-hang" not in _ids("with num_workers > 0 it trains 3x faster")


def test_a_lock_cycle_told_in_words_is_a_deadlock() -> None:
    # ceph#38677, as posted (a PR's account of a gdb session)
    text = ("During a deadlock, we were able to connect to the process with GDB and we noticed that all of the Python module "
            "threads were forever waiting on the GIL. We found that the thread that was holding the GIL was blocked in an "
            "attempt to acquire a mutex that was owned by another thread that was waiting on the GIL.")
    assert _causes(text)[:1] == ["deadlock"]
    assert "told-lock-cycle" not in _ids("the lock is held by another thread for a few milliseconds")


# sglang#33858, as posted: a Markdown bullet list, which curl -v's `* ` lines must not swallow
SGLANG_BULLETS = """\
Under an offered load of 3000 QPM, the benchmark stopped at `1309/4096`. At that point:

* `sglang:num_running_reqs` was `0`;
* `sglang:num_queue_reqs` was `0`;
* `/health` still returned HTTP 200;
* the unfinished requests remained in the TCP `ESTABLISHED` state and never received an HTTP response.
"""


def test_a_bullet_list_is_prose_not_curl_and_a_request_that_never_completes_is_a_result_nobody_sends() -> None:
    from triage_tui.parse.paste_split import split_paste

    assert [p.kind for p in split_paste(SGLANG_BULLETS) if p.text.startswith("*")] == ["text"]
    assert _causes(SGLANG_BULLETS)[:1] == ["event-never-fires"]
    # curl -v's own lines stay curl
    curl = "*   Trying 127.0.0.1:8000...\n* Connected to localhost (127.0.0.1) port 8000 (#0)\n> GET /health HTTP/1.1\n"
    assert split_paste(curl)[0].kind == "curl"
