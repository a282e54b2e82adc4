"""What a thread waits on, read from its stack: a table of frame patterns, in code, tested frame by frame.

The kinds (a fixed vocabulary the diagnosis engine reads):
  lock, condition, queue, socket (socket or pipe read), sleep, subprocess, collective (torch.distributed,
  NCCL, gloo, vLLM/SGLang collective wrappers), device-sync, compile (inductor, Triton, dynamo, nvcc,
  cpp_extension), file-io, rendezvous (TCPStore, init_process_group, connect), running (on a CPU, no wait
  frame), unknown (idle in something the table does not know).

How a stack is read. Every rule has a tier:
  3 PURPOSE   why the thread is there (collective, compile, rendezvous, device-sync): wins from anywhere in the
              stack, because the inner frames of a collective or a compile are only its mechanics
              (`_store_based_barrier` sleeps in a loop; FileBaton.wait sleeps; a Triton compile waits on ptxas).
  2 SPECIFIC  a library wait that names its object (queue.Queue.get, Popen.wait, Connection.recv).
  1 GENERIC   wrappers that say little on their own (threading Condition.wait, selectors, the source line of
              the innermost frame: `time.sleep(...)`, `lock.acquire()`, `sock.recv(...)`).
  0 NATIVE    native frames with --native (pthread_cond_wait, PyThread_acquire_lock_timed, epoll_wait).
The highest tier present wins; within a tier, the innermost frame. So queue.get → Condition.wait gives
"queue", not "condition", and a bare Condition.wait gives "condition".

Source-line rules (`code`) only apply to the innermost Python frame: since Python 3.11 py-spy does not show
C calls such as lock.acquire() or time.sleep(), the line being executed is the only place they appear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..model.stacks import Frame

KINDS = (
    "lock", "condition", "queue", "socket", "sleep", "subprocess", "collective", "device-sync", "compile",
    "file-io", "rendezvous", "running", "stopped", "unknown",
)

NATIVE, GENERIC, SPECIFIC, PURPOSE = 0, 1, 2, 3


@dataclass(frozen=True)
class WaitRule:
    """One row: a frame matches when every given pattern matches (re.search, case-sensitive)."""

    kind: str
    tier: int
    function: str = ""  # on Frame.function (py-spy names methods `Class.method`)
    file: str = ""  # on Frame.file, with "/" separators
    code: str = ""  # on the source line; innermost Python frame only
    native: Optional[bool] = None  # None: either; True: native frames only; False: Python frames only
    why: str = ""


def _rule(kind: str, tier: int, function: str = "", file: str = "", code: str = "",
          native: Optional[bool] = None, why: str = "") -> WaitRule:
    return WaitRule(kind, tier, function, file, code, native, why)


_C10D = r"torch/distributed/distributed_c10d\.py$"
_COLLECTIVE_OPS = (
    r"^(all_reduce|all_reduce_coalesced|all_gather|all_gather_into_tensor|all_gather_object|_all_gather_base|"
    r"broadcast|broadcast_object_list|reduce|reduce_scatter|reduce_scatter_tensor|_reduce_scatter_base|"
    r"all_to_all|all_to_all_single|barrier|monitored_barrier|gather|gather_object|scatter|scatter_object_list|"
    r"send|recv|isend|irecv|batch_isend_irecv|send_object_list|recv_object_list)$"
)
_COMPILE_WORDS = r"(?i)(compile|codegen|autotun|benchmark|bench|precompile|lower|load_by_key_path|make_ir|ttir|ttgir|ptx|cubin)"

# Order matters within one frame: the first matching row names the frame.
WAIT_RULES: tuple[WaitRule, ...] = (
    # -- rendezvous: before collective, since `_store_based_barrier` is a barrier on the store, not NCCL.
    _rule("rendezvous", PURPOSE, function=r"^(_store_based_barrier|init_process_group|_new_process_group_helper|"
          r"rendezvous|_rendezvous_helper|_create_c10d_store|_tcp_rendezvous_handler|_env_rendezvous_handler|"
          r"_file_rendezvous_handler|_init_process_group)$", file=r"torch/distributed/",
          why="torch.distributed start-up: every rank must reach the store"),
    _rule("rendezvous", PURPOSE, function=r"^TCPStore\.", why="TCPStore client or server"),
    _rule("rendezvous", PURPOSE, function=r"(^|\.)(next_rendezvous|_rendezvous|rendezvous)$",
          file=r"torch/distributed/elastic/", why="torchelastic rendezvous"),
    _rule("rendezvous", PURPOSE, native=True, function=r"c10d::TCPStore|c10d::detail::TCPClient|TCPStore::",
          why="TCPStore native"),
    # -- the NCCL watchdog and heartbeat threads sleep in a loop in every rank: background, not a collective.
    _rule("sleep", PURPOSE, native=True, function=r"ncclCommWatchdog|watchdogHandler|heartbeatMonitor|"
          r"ProcessGroupNCCL::Watchdog", why="NCCL watchdog thread (present in every rank)"),
    # -- device synchronize
    _rule("device-sync", PURPOSE, function=r"^(synchronize|Event\.synchronize|Stream\.synchronize|"
          r"Event\.wait|Stream\.wait_event)$", file=r"torch/cuda/", why="torch.cuda synchronize"),
    _rule("device-sync", PURPOSE, native=True, function=r"cu(da)?(Device|Stream|Event|Ctx)Synchroni[sz]e|"
          r"cudaStreamWaitEvent|cuStreamQuery", why="CUDA runtime synchronize"),
    # -- collectives
    _rule("collective", PURPOSE, function=_COLLECTIVE_OPS, file=_C10D, why="torch.distributed collective"),
    _rule("collective", PURPOSE, function=r"^(\w+\.)?_?[a-z_]*(all_reduce|all_gather|broadcast|reduce_scatter|"
          r"all_to_all|barrier)[a-z_]*$", file=r"(sglang|vllm)/.*(parallel_state|communication_op|"
          r"communicator|custom_all_reduce|pynccl|device_communicators/)", why="vLLM/SGLang collective wrapper"),
    _rule("collective", PURPOSE, function=r"^(broadcast_pyobj|point_to_point_pyobj)$", file=r"sglang/",
          why="SGLang pickled broadcast over torch.distributed"),
    _rule("collective", PURPOSE, function=r"(^|\.)collective_rpc$", file=r"vllm/",
          why="vLLM RPC to every worker, waiting for all replies"),
    _rule("collective", PURPOSE, function=r".", file=r"deepspeed/comm/", why="DeepSpeed communication"),
    # DDP: the reducer's gradient all_reduce is waited for at the end of loss.backward(); the Python main thread
    # sits in the autograd engine call (a long CPU backward is "running", not idle, so the status tells them apart)
    _rule("collective", PURPOSE, function=r"^(_engine_run_backward|Variable\._execution_engine\.run_backward)$",
          file=r"torch/autograd/(graph|__init__)\.py$", why="backward: DDP's reducer all_reduce"),
    _rule("collective", PURPOSE, native=True, function=r"nccl[A-Z]\w*|c10d::ProcessGroupNCCL|"
          r"c10d::ProcessGroupGloo|gloo::|WorkNCCL", why="NCCL/gloo native"),
    # -- compile (a JIT compile or an autotune: patience, or a stale lock file)
    _rule("compile", PURPOSE, function=r"^FileBaton\.wait$", why="torch cpp_extension build lock (stale if idle)"),
    _rule("compile", PURPOSE, function=r"^(load|load_inline|_jit_compile|_write_ninja_file_and_build_library|"
          r"_run_ninja_build|_build_extension_module)$", file=r"torch/utils/cpp_extension\.py$",
          why="torch cpp_extension JIT build (ninja/nvcc)"),
    _rule("compile", PURPOSE, function=_COMPILE_WORDS, file=r"torch/_inductor/", why="inductor compile/autotune"),
    _rule("compile", PURPOSE, file=r"torch/_dynamo/(convert_frame|symbolic_convert|output_graph)\.py$",
          why="dynamo tracing"),
    _rule("compile", PURPOSE, file=r"/triton/(compiler|backends)/", why="Triton compiler"),
    _rule("compile", PURPOSE, function=_COMPILE_WORDS, file=r"/triton/", why="Triton JIT compile/autotune"),
    _rule("compile", PURPOSE, file=r"/(flashinfer|deep_gemm)/jit/", why="JIT kernel build"),
    _rule("compile", PURPOSE, function=r"(?i)compile", file=r"vllm/compilation/", why="vLLM torch.compile"),
    # -- vLLM's shared-memory broadcast queue (workers waiting for the next call from the driver)

    _rule("compile", PURPOSE, file=r"torch/_inductor/(async_compile|compile_fx|autotune_process|select_algorithm)"
          r"\.py$|torch/_inductor/compile_worker/", why="inductor compile workers"),
    # -- specific library waits
    # vLLM's shared-memory broadcast queue: workers waiting for the driver's next call. Below PURPOSE so that
    # the driver's collective_rpc, which waits on the same queue for every reply, reads as a collective.
    _rule("queue", SPECIFIC, function=r"^(MessageQueue\.)?(acquire_read|acquire_write|dequeue|enqueue)$",
          file=r"shm_broadcast\.py$", why="vLLM shared-memory message queue"),
    # multiprocessing.Pool workers wait for a task on the queue's SemLock: idle workers, not a lock deadlock.
    # PURPOSE: a multiprocessing queue's get waits for an item; the SemLock inside it (its read lock, held by
    # whichever reader got there first) is the queue's mechanics, as a collective's inner sleep is its own
    _rule("queue", PURPOSE, function=r"^(SimpleQueue\.get|Queue\.get)$", file=r"multiprocessing/queues\.py$",
          why="waiting for an item on a multiprocessing queue"),
    _rule("queue", SPECIFIC, function=r"^(Queue\.(get|put|join)|SimpleQueue\.get)$",
          file=r"/(queue|multiprocessing/queues|asyncio/queues)\.py$", why="queue.Queue"),
    # GENERIC, not SPECIFIC: `_worker` is the bottom of every pool thread's stack, so a `with lock:` frame
    # above it (the innermost frame) must win; alone it means an idle pool thread on its work queue
    _rule("queue", GENERIC, function=r"^_worker$", file=r"concurrent/futures/thread\.py$",
          why="idle thread-pool worker"),
    _rule("queue", SPECIFIC, function=r"^worker$", file=r"multiprocessing/pool\.py$",
          why="pool worker waiting for a task"),
    _rule("condition", SPECIFIC, function=r"^(Future\.result|wait|as_completed|Future\._?wait)$",
          file=r"concurrent/futures/_base\.py$", why="waiting on a future"),
    _rule("subprocess", SPECIFIC, function=r"^(Popen\.(wait|_wait|communicate|_communicate|_try_wait|poll)|"
          r"run|call|check_call|check_output)$", file=r"/subprocess\.py$", why="waiting for a child"),
    _rule("subprocess", SPECIFIC, function=r"^(Popen\.(wait|poll)|BaseProcess\.join|Process\.join)$",
          file=r"multiprocessing/(popen_\w+|process)\.py$", why="waiting for a multiprocessing child"),
    _rule("socket", SPECIFIC, function=r"^(Connection\.(recv|_recv|_recv_bytes|recv_bytes|poll|_poll)|wait)$",
          file=r"multiprocessing/connection\.py$", why="multiprocessing pipe"),
    _rule("socket", SPECIFIC, function=r"(^|\.)(recv|recv_pyobj|recv_multipart|recv_json|recv_string|poll)$",
          file=r"zmq/", why="ZeroMQ receive"),
    _rule("socket", SPECIFIC, function=r"^(Scheduler\.)?recv_requests$", file=r"sglang/",
          why="SGLang scheduler polling the tokenizer's ZeroMQ socket"),
    _rule("rendezvous", SPECIFIC, function=r"^create_connection$", file=r"/socket\.py$", why="socket connect"),
    _rule("socket", SPECIFIC, function=r"^(socket\.accept|SocketIO\.readinto|socket\.recv\w*)$",
          file=r"/socket\.py$", why="socket read"),
    _rule("socket", SPECIFIC, function=r"^(SSLSocket\.(read|recv|recv_into)|SSLObject\.read)$", file=r"/ssl\.py$"),
    _rule("lock", SPECIFIC, function=r"^(SemLock\.__enter__|SemLock\.acquire|Lock\.acquire|RLock\.acquire)$",
          file=r"multiprocessing/synchronize\.py$", why="multiprocessing lock"),
    _rule("lock", SPECIFIC, function=r"(^|\.)acquire$", file=r"/filelock/", why="file lock"),
    # the locks a fork most often copies held (the import machinery's per-module lock, logging's): waits on a lock
    _rule("lock", SPECIFIC, function=r"^(_ModuleLock\.acquire|_lock_unlock_module|_get_module_lock)$",
          file=r"importlib\._bootstrap|importlib/_bootstrap", why="a module's import lock"),
    _rule("lock", SPECIFIC, function=r"^(Handler\.acquire|_acquireLock)$", file=r"logging/__init__\.py$",
          why="logging's lock"),
    _rule("file-io", SPECIFIC, function=r"^(load|_load|load_file|safe_open|_legacy_load)$",
          file=r"(torch/serialization|safetensors/torch)\.py$", why="reading weights"),
    _rule("file-io", SPECIFIC, function=r"^(copyfileobj|copyfile|copy2?|_fastcopy_sendfile)$", file=r"/shutil\.py$"),
    # `with cond:` enters the Condition by acquiring its lock: blocked there, the holder never lets go (a
    # Queue's put/get take it for an instant); a wait for the condition itself is Condition.wait
    _rule("lock", SPECIFIC, function=r"^(Condition\.)?__enter__$", file=r"(^|/)threading\.py$",
          why="acquiring a Condition's lock"),
    _rule("condition", SPECIFIC, function=r"^(Thread\.join|Thread\._wait_for_tstate_lock)$",
          file=r"/threading\.py$", why="waiting for another thread to end"),
    # py-spy before 0.4 (and pastes of it) print bare function names and often a bare file name:
    # `get (queue.py:164)`, `result (_base.py:427)`, `wait (threading.py:295)`
    _rule("queue", SPECIFIC, function=r"^(get|put|join)$", file=r"(^|/)queue\.py$", native=False, why="queue.Queue"),
    _rule("condition", SPECIFIC, function=r"^result$", file=r"(^|/)(concurrent/futures/)?_base\.py$", native=False,
          why="waiting on a future"),
    # -- generic wrappers: say what the wait is made of when nothing above says why
    _rule("condition", GENERIC, function=r"^(wait|wait_for)$", file=r"(^|/)threading\.py$", native=False),
    _rule("condition", GENERIC, function=r"^(Condition\.wait|Condition\.wait_for|Event\.wait|Semaphore\.acquire|"
          r"BoundedSemaphore\.acquire|Barrier\.wait|Barrier\._wait)$", file=r"/threading\.py$"),
    _rule("condition", GENERIC, function=r"^(Condition\.wait|Event\.wait|Barrier\.wait|Barrier\._wait|"
          r"Semaphore\.acquire)$", file=r"multiprocessing/synchronize\.py$"),
    _rule("socket", GENERIC, function=r"^(\w*Selector\.select|select)$", file=r"/selectors\.py$"),
    # GENERIC: every coroutine runs inside _run_once, so a handler blocked in `with lock:` (innermost) must win
    _rule("socket", GENERIC, function=r"^(BaseEventLoop\._run_once|_run_once)$", file=r"asyncio/base_events\.py$",
          why="idle asyncio loop"),
    # source line of the innermost Python frame (C calls py-spy does not show)
    _rule("sleep", GENERIC, code=r"\bsleep\(", native=False),
    # queue.SimpleQueue is written in C: py-spy shows only the line that calls its get (`iter(taskqueue.get,
    # None)` in multiprocessing.Pool's task handler), and the kernel only a futex
    _rule("queue", GENERIC, code=r"\b\w*(queue|_q)\w*\.get(_nowait)?\b", native=False),
    _rule("lock", GENERIC, code=r"\.acquire\(|^\s*with\s+[\w.\[\]]*(?i:lock)\w*\s*:|_lock\(\)", native=False),  # CACHE_LOCK too
    _rule("collective", GENERIC, code=r"\b(work|handle|req|request|fut|future)\w*\.wait\(", native=False),
    _rule("device-sync", GENERIC, code=r"\.synchronize\(", native=False),
    _rule("rendezvous", GENERIC, code=r"\.connect\(|create_connection\(", native=False),
    _rule("socket", GENERIC, code=r"\.(recv|recv_into|recvfrom|recv_bytes|recv_pyobj|recv_multipart|accept)\(|"
          r"\bselect\.(select|poll|epoll)|\.poll\(|\bos\.read\(|\.readline\(\)", native=False),
    _rule("subprocess", GENERIC, code=r"\bos\.wait(pid|4)?\(", native=False),
    _rule("file-io", GENERIC, code=r"\bos\.(fsync|pread|pwrite)\(|\.(readinto|write|flush)\(", native=False),
    # native mechanics (--native)
    _rule("lock", NATIVE, native=True, function=r"PyThread_acquire_lock|lock_PyThread_acquire_lock|rlock_acquire|"
          r"pthread_mutex_lock|__lll_lock_wait|sem_(clock|timed)?wait|[Ss]emaphore_?[Ww]ait\b"),
    _rule("condition", NATIVE, native=True, function=r"pthread_cond_(timed|clock)?wait|condition_variable"),
    _rule("sleep", NATIVE, native=True, function=r"^(time_sleep|pysleep|(__)?clock_nanosleep|(__)?nanosleep)"),
    _rule("socket", NATIVE, native=True, function=r"^(sock_recv\w*|sock_accept|select_select|select_poll\w*|"
          r"select_epoll_poll\w*|(__)?epoll_wait|(__)?poll|__select|(__libc_)?recv\w*|os_read\w*|(__libc_)?read)$"),
    _rule("subprocess", NATIVE, native=True, function=r"^(os_waitpid\w*|(__)?wait4|(__)?waitpid)$"),
)


def frame_label(frame: Frame) -> str:
    """`function (file:line)`: how a wait frame or a departing frame is named in one line."""
    base = frame.file.rsplit("/", 1)[-1] if frame.file else ""
    if not base:
        return frame.function
    return f"{frame.function} ({base}:{frame.line})" if frame.line else f"{frame.function} ({base})"


def _matches(rule: WaitRule, frame: Frame, innermost_python: bool) -> bool:
    if rule.native is not None and rule.native != frame.native:
        return False
    if rule.code and (not innermost_python or not re.search(rule.code, frame.code)):
        return False
    if rule.function and not re.search(rule.function, frame.function):
        return False
    if rule.file and not re.search(rule.file, frame.file.replace("\\", "/")):
        return False
    return True


def classify_frame(frame: Frame, innermost_python: bool = False) -> Optional[WaitRule]:
    """The first row of the table this frame matches, or None."""
    for rule in WAIT_RULES:
        if _matches(rule, frame, innermost_python):
            return rule
    return None


def classify_thread(frames: Sequence[Frame], status: str = "unknown") -> tuple[str, str]:
    """(wait kind, the frame it came from) for a stack given innermost first.

    With no matching frame: "running" when py-spy saw the thread on a CPU (active / holding the GIL),
    otherwise "unknown" with its innermost frame (idle in something the table does not know).
    """
    first_python = next((i for i, f in enumerate(frames) if not f.native), -1)
    best: Optional[tuple[int, WaitRule, Frame]] = None
    for index, frame in enumerate(frames):
        rule = classify_frame(frame, innermost_python=index == first_python)
        if rule is not None and (best is None or rule.tier > best[0]):
            best = (rule.tier, rule, frame)
    if best is not None:
        return best[1].kind, frame_label(best[2])
    innermost = frames[first_python] if first_python >= 0 else (frames[0] if frames else None)
    label = frame_label(innermost) if innermost is not None else ""
    if status in ("active", "gil"):
        return "running", label
    return "unknown", label


# Kernel wait channels (/proc/PID/task/TID/wchan) → kind, for threads py-spy cannot read. First match wins.
KERNEL_WCHAN_RULES: tuple[tuple[str, str], ...] = (
    (r"nanosleep|hrtimer_sleep|schedule_hrtimeout|msleep", "sleep"),
    (r"futex", "lock"),
    (r"do_wait|wait_consider_task|kernel_wait4", "subprocess"),
    (r"pipe_read|pipe_wait|unix_stream|sk_wait|tcp_|inet_|sock_|ep_poll|do_select|do_sys_poll|poll_schedule", "socket"),
    (r"nfs|fuse|io_schedule|blk|folio_wait|wait_on_page|ext4|xfs|jbd2", "file-io"),
    # a network filesystem's RPC wait: the file operation waits for the server. Lustre's ptlrpc and its client
    # layers (mdc_ metadata, lmv_, osc_ object, ll_ llite), sunrpc's rpc_wait_bit_killable (NFS), ceph, cifs/smb
    (r"^ptlrpc_|^rpc_wait|^__rpc_|^mdc_|^lmv_|^osc_|^ll_|^ceph_|^cifs_|^smb2_", "file-io"),
    (r"nvidia|uvm|os_(acquire|wait)", "device-sync"),
)


# The syscall a thread sleeps in (/proc/PID/task/TID/syscall, named by collect.thread_states) → kind.
# Every blocking wait of Python's threading ends in a futex, so futex reads as "lock".
KERNEL_SYSCALL_KINDS: dict[str, str] = {
    "nanosleep": "sleep", "clock_nanosleep": "sleep", "pause": "sleep",
    "futex": "lock",
    "wait4": "subprocess", "waitid": "subprocess",
    "read": "socket", "recvfrom": "socket", "recvmsg": "socket", "accept": "socket", "accept4": "socket",
    "poll": "socket", "ppoll": "socket", "select": "socket", "pselect6": "socket", "epoll_wait": "socket",
    "epoll_pwait": "socket", "epoll_pwait2": "socket",
    "connect": "rendezvous",
    "pread64": "file-io",
}


def classify_kernel(wchan: str, state: str, syscall: str = "") -> str:
    """A kind for a thread seen only by the kernel: R is running, T is stopped, else its wait channel,
    else the syscall it sleeps in."""
    if state == "R":
        return "running"
    if state in ("T", "t"):
        return "stopped"
    for pattern, kind in KERNEL_WCHAN_RULES:
        if wchan and re.search(pattern, wchan):
            return kind
    return KERNEL_SYSCALL_KINDS.get(syscall, "unknown")
