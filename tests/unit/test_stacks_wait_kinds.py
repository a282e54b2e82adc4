"""The wait-kind table, frame by frame, on stacks shaped like real servers (innermost frame first)."""

from __future__ import annotations

import pytest

from triage_tui.diagnose.wait_kinds import KINDS, WAIT_RULES, classify_frame, classify_kernel, classify_thread
from triage_tui.model.stacks import Frame

SITE = "/usr/lib/python3.11/site-packages"
STD = "/usr/lib/python3.11"


def F(function: str, file: str, line: int = 10, code: str = "", native: bool = False) -> Frame:  # noqa: N802
    return Frame(function=function, file=file, line=line, code=code, native=native)


C10D = f"{SITE}/torch/distributed/distributed_c10d.py"
LOGGER = F("_exception_logger.<locals>.wrapper", f"{SITE}/torch/distributed/c10d_logger.py", 81,
           "return func(*args, **kwargs)")
SPAWN_TAIL = (
    F("BaseProcess.run", f"{STD}/multiprocessing/process.py", 108), F("BaseProcess._bootstrap", f"{STD}/multiprocessing/process.py", 314),
    F("_main", f"{STD}/multiprocessing/spawn.py", 135), F("spawn_main", f"{STD}/multiprocessing/spawn.py", 122),
    F("<module>", "<string>", 1),
)
SCHED = f"{SITE}/sglang/srt/managers/scheduler.py"
SGLANG_LOOP = (F("Scheduler.event_loop_normal", SCHED, 900), F("run_scheduler_process", SCHED, 2500), *SPAWN_TAIL)
SHM = f"{SITE}/vllm/distributed/device_communicators/shm_broadcast.py"
EXECUTOR = f"{SITE}/vllm/v1/executor/multiproc_executor.py"
CPP_EXT = f"{SITE}/torch/utils/cpp_extension.py"
USER = "/srv/app/main.py"
THREAD_TAIL = (
    F("Thread.run", f"{STD}/threading.py", 982), F("Thread._bootstrap_inner", f"{STD}/threading.py", 1045),
    F("Thread._bootstrap", f"{STD}/threading.py", 1002),
)

# (case, frames innermost first, py-spy status, expected kind, expected frame label prefix)
CASES = [
    # torch.distributed
    ("all_reduce", [F("all_reduce", C10D, 2501, "work.wait()"), LOGGER, F("train_step", USER, 40)],
     "idle", "collective", "all_reduce (distributed_c10d.py:2501)"),
    ("barrier", [F("barrier", C10D, 4159, "work.wait()"), LOGGER, F("main", USER, 12)], "idle", "collective", "barrier ("),
    ("Work.wait in user code", [F("sync_grads", USER, 77, "handle.wait()"), F("main", USER, 12)], "idle",
     "collective", "sync_grads (main.py:77)"),
    ("NCCL watchdog", [F("std::this_thread::sleep_for", "", 0, native=True),
                       F("c10d::ProcessGroupNCCL::watchdogHandler()", "libtorch_cuda.so", native=True),
                       F("c10d::ProcessGroupNCCL::ncclCommWatchdog()", "libtorch_cuda.so", native=True),
                       F("start_thread", "libc.so.6", native=True)], "idle", "sleep", "c10d::ProcessGroupNCCL::watchdogHandler"),
    ("NCCL kernel wait (native)", [F("ncclAllReduce", "libnccl.so.2", native=True),
                                   F("all_reduce", C10D, 2501)], "idle", "collective", "ncclAllReduce"),
    ("gloo (native)", [F("gloo::transport::tcp::UnboundBuffer::waitRecv", "libtorch_cpu.so", native=True),
                       F("main", USER, 3)], "idle", "collective", "gloo::"),
    # vLLM
    ("vLLM worker dequeue", [F("MessageQueue.acquire_read", SHM, 450, "sched_yield()"),
                             F("_GeneratorContextManager.__enter__", f"{STD}/contextlib.py", 137, "return next(self.gen)"),
                             F("MessageQueue.dequeue", SHM, 510), F("WorkerProc.worker_busy_loop", EXECUTOR, 540),
                             F("WorkerProc.worker_main", EXECUTOR, 500), *SPAWN_TAIL], "idle", "queue",
     "MessageQueue.acquire_read (shm_broadcast.py:450)"),
    ("vLLM driver collective_rpc", [F("MessageQueue.acquire_read", SHM, 450, "time.sleep(0)"),
                                    F("MessageQueue.dequeue", SHM, 510), F("get_response", EXECUTOR, 240),
                                    F("MultiprocExecutor.collective_rpc", EXECUTOR, 250),
                                    F("LLMEngine.step", f"{SITE}/vllm/engine/llm_engine.py", 900)], "idle",
     "collective", "MultiprocExecutor.collective_rpc"),
    # SGLang
    ("SGLang recv_requests", [F("Scheduler.recv_requests", SCHED, 1050,
                                "recv_req = self.recv_from_tokenizer.recv_pyobj(zmq.NOBLOCK)"), *SGLANG_LOOP],
     "active", "socket", "Scheduler.recv_requests (scheduler.py:1050)"),
    ("SGLang broadcast_pyobj", [F("broadcast", C10D, 2700), LOGGER,
                                F("broadcast_pyobj", f"{SITE}/sglang/srt/utils.py", 1100),
                                F("Scheduler.recv_requests", SCHED, 1080), *SGLANG_LOOP], "idle", "collective",
     "broadcast (distributed_c10d.py:2700)"),
    ("SGLang tp_worker forward (running)", [F("LlamaForCausalLM.forward", f"{SITE}/sglang/srt/models/llama.py", 400),
                                            F("TpModelWorker.forward_batch_generation",
                                              f"{SITE}/sglang/srt/managers/tp_worker.py", 200),
                                            F("Scheduler.run_batch", SCHED, 1500), *SGLANG_LOOP], "gil", "running",
     "LlamaForCausalLM.forward"),
    ("SGLang event loop, idle in unknown C", [*SGLANG_LOOP], "idle", "unknown", "Scheduler.event_loop_normal"),
    ("SGLang tp_worker cuda synchronize", [F("synchronize", f"{SITE}/torch/cuda/__init__.py", 985,
                                             "return torch._C._cuda_synchronize()"),
                                           F("TpModelWorker.forward_batch_generation",
                                             f"{SITE}/sglang/srt/managers/tp_worker.py", 210),
                                           F("Scheduler.run_batch", SCHED, 1500), *SGLANG_LOOP], "idle",
     "device-sync", "synchronize (__init__.py:985)"),
    ("event.synchronize in user code", [F("step", USER, 9, "done_event.synchronize()")], "idle", "device-sync", "step"),
    ("SGLang custom all-reduce", [F("CustomAllreduce.custom_all_reduce",
                                    f"{SITE}/sglang/srt/distributed/device_communicators/custom_all_reduce.py", 300),
                                  F("GroupCoordinator.all_reduce", f"{SITE}/sglang/srt/distributed/parallel_state.py", 400),
                                  F("tensor_model_parallel_all_reduce",
                                    f"{SITE}/sglang/srt/distributed/communication_op.py", 13)], "idle", "collective",
     "CustomAllreduce.custom_all_reduce"),
    # rendezvous
    ("store-based barrier sleeping", [F("_store_based_barrier", C10D, 480, "time.sleep(0.01)"),
                                      F("init_process_group", C10D, 1500), F("main", USER, 5)], "idle", "rendezvous",
     "_store_based_barrier"),
    ("TCPStore constructor", [F("TCPStore.__init__", "<torch>", 0), F("_create_c10d_store",
                              f"{SITE}/torch/distributed/rendezvous.py", 180)], "idle", "rendezvous", "TCPStore.__init__"),
    ("env rendezvous", [F("_create_c10d_store", f"{SITE}/torch/distributed/rendezvous.py", 189,
                          "return TCPStore(host_name=hostname, port=port)"),
                        F("_env_rendezvous_handler", f"{SITE}/torch/distributed/rendezvous.py", 260),
                        F("init_process_group", C10D, 1480)], "idle", "rendezvous", "_create_c10d_store"),
    ("socket connect", [F("create_connection", f"{STD}/socket.py", 836, "sock.connect(sa)"), F("main", USER, 2)],
     "idle", "rendezvous", "create_connection (socket.py:836)"),
    # compile
    ("Triton compile", [F("compile", f"{SITE}/triton/compiler/compiler.py", 280),
                        F("JITFunction.run", f"{SITE}/triton/runtime/jit.py", 660),
                        F("model_forward", USER, 30)], "active", "compile", "compile (compiler.py:280)"),
    ("Triton autotune benchmark", [F("do_bench", f"{SITE}/triton/testing.py", 100, "torch.cuda.synchronize()"),
                                   F("Autotuner._bench", f"{SITE}/triton/runtime/autotuner.py", 130)], "idle",
     "compile", "do_bench"),
    ("Triton launch at run time is not a compile", [F("JITFunction.run", f"{SITE}/triton/runtime/jit.py", 690),
                                                    F("model_forward", USER, 30)], "gil", "running", "JITFunction.run"),
    ("inductor async compile waiting on workers", [F("Future.result", f"{STD}/concurrent/futures/_base.py", 451),
                                                   F("AsyncCompile.wait", f"{SITE}/torch/_inductor/async_compile.py", 300),
                                                   F("compile_to_module", f"{SITE}/torch/_inductor/graph.py", 1800)],
     "idle", "compile", "AsyncCompile.wait"),
    ("dynamo tracing", [F("InstructionTranslator.run", f"{SITE}/torch/_dynamo/symbolic_convert.py", 900),
                        F("_compile", f"{SITE}/torch/_dynamo/convert_frame.py", 600)], "active", "compile",
     "InstructionTranslator.run"),
    ("FileBaton stale lock", [F("FileBaton.wait", f"{SITE}/torch/utils/file_baton.py", 42, "time.sleep(self.wait_seconds)"),
                              F("_jit_compile", CPP_EXT, 1700), F("load", CPP_EXT, 1300), F("<module>", USER, 1)],
     "idle", "compile", "FileBaton.wait (file_baton.py:42)"),
    ("nvcc through ninja", [F("Popen._try_wait", f"{STD}/subprocess.py", 1959), F("Popen._wait", f"{STD}/subprocess.py", 2001),
                            F("Popen.wait", f"{STD}/subprocess.py", 1264), F("run", f"{STD}/subprocess.py", 550),
                            F("_run_ninja_build", CPP_EXT, 2100), F("_write_ninja_file_and_build_library", CPP_EXT, 1800)],
     "idle", "compile", "_run_ninja_build"),
    # the standard library
    ("time.sleep", [F("<module>", USER, 9, "time.sleep(1000)")], "idle", "sleep", "<module> (main.py:9)"),
    ("queue.get", [F("Condition.wait", f"{STD}/threading.py", 327, "waiter.acquire()"),
                   F("Queue.get", f"{STD}/queue.py", 171, "self.not_empty.wait()"), F("consume", USER, 20), *THREAD_TAIL],
     "idle", "queue", "Queue.get (queue.py:171)"),
    ("bare Condition.wait", [F("Condition.wait", f"{STD}/threading.py", 327, "waiter.acquire()"),
                             F("Event.wait", f"{STD}/threading.py", 629), F("main", USER, 4)], "idle", "condition",
     "Condition.wait"),
    ("Lock.acquire", [F("critical", USER, 14, "lock.acquire()"), *THREAD_TAIL], "idle", "lock", "critical (main.py:14)"),
    ("with lock:", [F("critical", USER, 15, "with self._state_lock:"), *THREAD_TAIL], "idle", "lock", "critical"),
    ("with A_MODULE_LOCK:", [F("refresh", USER, 16, "with CACHE_LOCK:  # held by a thread that is gone"), *THREAD_TAIL],
     "idle", "lock", "refresh"),
    ("Lock.acquire (native)", [F("PyThread_acquire_lock_timed", "libpython3.11.so", native=True),
                               F("lock_PyThread_acquire_lock", "libpython3.11.so", native=True),
                               F("critical", USER, 14)], "idle", "lock", "PyThread_acquire_lock_timed"),
    ("subprocess.wait", [F("Popen._try_wait", f"{STD}/subprocess.py", 1959), F("Popen._wait", f"{STD}/subprocess.py", 2001),
                         F("Popen.wait", f"{STD}/subprocess.py", 1264), F("main", USER, 30)], "idle", "subprocess",
     "Popen._try_wait"),
    ("subprocess.communicate", [F("PollSelector.select", f"{STD}/selectors.py", 416, "fd_event_list = self._selector.poll(timeout)"),
                                F("Popen._communicate", f"{STD}/subprocess.py", 2115),
                                F("Popen.communicate", f"{STD}/subprocess.py", 1209), F("main", USER, 31)], "idle",
     "subprocess", "Popen._communicate"),
    ("multiprocessing join", [F("Popen.wait", f"{STD}/multiprocessing/popen_fork.py", 43),
                              F("BaseProcess.join", f"{STD}/multiprocessing/process.py", 149), F("main", USER, 50)],
     "idle", "subprocess", "Popen.wait (popen_fork.py:43)"),
    ("socket.recv", [F("serve", USER, 60, "data = conn.recv(4096)")], "idle", "socket", "serve"),
    ("select.select", [F("serve", USER, 61, "r, _, _ = select.select([sock], [], [])")], "idle", "socket", "serve"),
    ("asyncio idle loop", [F("EpollSelector.select", f"{STD}/selectors.py", 468),
                           F("BaseEventLoop._run_once", f"{STD}/asyncio/base_events.py", 1898),
                           F("BaseEventLoop.run_forever", f"{STD}/asyncio/base_events.py", 607)], "idle", "socket",
     "EpollSelector.select"),
    # #13 item 15: frame rules that misread real stacks
    ("an async handler blocked in `with lock:` inside the event loop",
     [F("work", USER, 67, "with _lock_b:"), F("run_endpoint_function", f"{SITE}/fastapi/routing.py", 212),
      F("Handle._run", f"{STD}/asyncio/events.py", 84),
      F("BaseEventLoop._run_once", f"{STD}/asyncio/base_events.py", 1936)], "idle", "lock", "work"),
    ("a thread-pool worker in `with lock:` (not an idle pool thread)",
     [F("flush", USER, 80, "with self.lock:"), F("_WorkItem.run", f"{STD}/concurrent/futures/thread.py", 58),
      F("_worker", f"{STD}/concurrent/futures/thread.py", 83)], "idle", "lock", "flush"),
    ("DDP: loss.backward() waits for the reducer's all_reduce",
     [F("_engine_run_backward", f"{SITE}/torch/autograd/graph.py", 841),
      F("backward", f"{SITE}/torch/autograd/__init__.py", 353), F("Tensor.backward", f"{SITE}/torch/_tensor.py", 630),
      F("train_step", USER, 40)], "idle", "collective", "_engine_run_backward"),
    ("an idle multiprocessing.Pool worker on its task queue's SemLock",
     [F("SimpleQueue.get", f"{STD}/multiprocessing/queues.py", 364, "with self._rlock:"),
      F("worker", f"{STD}/multiprocessing/pool.py", 114)], "idle", "queue", "SimpleQueue.get"),
    # as py-spy really shows it: the queue's read lock innermost (the lock is the queue's mechanics)
    ("an idle Pool worker in the queue's read lock (SemLock.__enter__ innermost)",
     [F("SemLock.__enter__", f"{STD}/multiprocessing/synchronize.py", 95),
      F("SimpleQueue.get", f"{STD}/multiprocessing/queues.py", 364, "with self._rlock:"),
      F("worker", f"{STD}/multiprocessing/pool.py", 114)], "idle", "queue", "SimpleQueue.get"),
    ("a Pool task that itself waits on a multiprocessing lock (not an idle worker)",
     [F("SemLock.__enter__", f"{STD}/multiprocessing/synchronize.py", 95),
      F("task", USER, 12, "with LOCK:"), F("worker", f"{STD}/multiprocessing/pool.py", 125)], "idle", "lock",
     "SemLock.__enter__"),
    ("Pool's task handler on a C queue.SimpleQueue (py-spy shows only the calling line)",
     [F("Pool._handle_tasks", f"{STD}/multiprocessing/pool.py", 531,
        "for taskseq, set_length in iter(taskqueue.get, None):"),
      F("Thread.run", f"{STD}/threading.py", 982)], "idle", "queue", "Pool._handle_tasks"),
    ("os.read on a pipe", [F("read_child", USER, 70, "chunk = os.read(fd, 65536)")], "idle", "socket", "read_child"),
    ("multiprocessing pipe recv", [F("Connection._recv", f"{STD}/multiprocessing/connection.py", 379),
                                   F("Connection._recv_bytes", f"{STD}/multiprocessing/connection.py", 414),
                                   F("Connection.recv", f"{STD}/multiprocessing/connection.py", 250)], "idle", "socket",
     "Connection._recv"),
    ("torch.load", [F("_legacy_load", f"{SITE}/torch/serialization.py", 1200), F("load", f"{SITE}/torch/serialization.py", 1000),
                    F("load_weights", USER, 5)], "idle", "file-io", "_legacy_load"),
    ("busy loop", [F("<module>", USER, 4, "x += 1")], "active", "running", "<module> (main.py:4)"),
]


@pytest.mark.parametrize("case,frames,status,kind,label", CASES, ids=[c[0] for c in CASES])
def test_thread_classification(case: str, frames: list[Frame], status: str, kind: str, label: str) -> None:
    got_kind, got_frame = classify_thread(frames, status)
    assert (got_kind, got_frame[: len(label)]) == (kind, label), case


def test_source_line_rules_apply_to_the_innermost_python_frame_only() -> None:
    outer_sleep = [F("compute", USER, 5, "x = y * 2"), F("main", USER, 9, "time.sleep(compute())")]
    assert classify_thread(outer_sleep, "idle")[0] == "unknown"
    # a native frame innermost does not hide the innermost Python frame's line
    native_first = [F("0x7f00", "libc.so.6", native=True), F("main", USER, 9, "time.sleep(3)")]
    assert classify_thread(native_first, "idle") == ("sleep", "main (main.py:9)")


def test_empty_stack_is_unknown_and_every_rule_names_a_known_kind() -> None:
    assert classify_thread([], "idle") == ("unknown", "")
    assert {rule.kind for rule in WAIT_RULES} <= set(KINDS)


def test_single_frames() -> None:
    assert classify_frame(F("Queue.get", f"{STD}/queue.py")).kind == "queue"
    assert classify_frame(F("all_reduce", C10D)).kind == "collective"
    assert classify_frame(F("_store_based_barrier", C10D)).kind == "rendezvous"  # not "barrier"
    assert classify_frame(F("main", USER, code="time.sleep(1)")) is None  # not the innermost
    assert classify_frame(F("main", USER, code="time.sleep(1)"), innermost_python=True).kind == "sleep"
    assert classify_frame(F("forward", f"{SITE}/torch/_dynamo/eval_frame.py")) is None  # compiled code runs through it


@pytest.mark.parametrize("wchan,state,kind", [
    ("hrtimer_nanosleep", "S", "sleep"), ("futex_wait_queue", "S", "lock"), ("do_wait", "S", "subprocess"),
    ("pipe_read", "S", "socket"), ("ep_poll", "S", "socket"), ("", "R", "running"), ("do_signal_stop", "T", "stopped"),
    ("folio_wait_bit_common", "D", "file-io"), ("something_else", "S", "unknown"),
])
def test_kernel_wait_channels(wchan: str, state: str, kind: str) -> None:
    assert classify_kernel(wchan, state) == kind


@pytest.mark.parametrize("syscall,kind", [("futex", "lock"), ("clock_nanosleep", "sleep"), ("wait4", "subprocess"),
                                          ("epoll_wait", "socket"), ("connect", "rendezvous"), ("ioctl", "unknown")])
def test_kernel_syscalls_when_the_wait_channel_says_nothing(syscall: str, kind: str) -> None:
    assert classify_kernel("", "S", syscall) == kind
