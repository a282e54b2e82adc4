"""The twentieth pass's readers of tool output (issue 15): messages whose wording a program fixes (a runtime's, a
driver's, an orchestrator's, a debugger's), each read from its source or docs and checked on a public thread outside
the corpus. Data, not code: signal_lexicon.LEXICON makes one Signal of each row, with the other specific rows, so
they are scanned like every row there (one line at a time, linear patterns, bounded counts).

Each row: (observation id, what the line is evidence of, pattern, source, regex flags). The rules that weigh the new
ids are in diagnose/signal_rows.py (the twentieth pass's group).
"""

from __future__ import annotations

import re
from typing import Tuple

ToolRow = Tuple[str, str, str, str, int]  # (id, means, pattern, source, flags)

TOOL_OUTPUT_ROWS: tuple[ToolRow, ...] = (
    # libstdc++'s verbose terminate handler (libsupc++/vterminate.cc) prints one of these three lines to stderr and
    # then calls abort(): a C++ program (or a C++ library inside one) died of an exception nobody caught
    ("log-cxx-terminate", "a C++ process aborted on an uncaught exception (libstdc++'s terminate handler): it died",
     r"\bterminate called (?:after throwing an instance of '|without an active exception\b|recursively\b)",
     "https://github.com/gcc-mirror/gcc/blob/master/libstdc%2B%2B-v3/libsupc%2B%2B/vterminate.cc", 0),
    # Julia's code loading (base/loading.jl) and Pkg print these while they compile a package's cache file: "[ Info:
    # Precompiling Revise [295af30f-...]", Julia 0.4's "INFO: Recompiling stale cache file ... for module Gadfly",
    # Pkg's "Precompiling project..."; the first `using` of a package compiles, for seconds to minutes
    ("log-compiling", "compiling (JIT / CUDA graphs / Triton / autotuning)",
     r"^\[ Info: Precompiling [\w.]{1,100} \[[0-9a-f-]{36}\]|^┌ Info: Precompiling [\w.]{1,100} \[|\bINFO: Recompiling "
     r"stale cache file\b|^\s{0,8}Precompiling (?:project|packages)\.\.\.",
     "https://github.com/JuliaLang/julia/pull/49052; https://github.com/JuliaLang/julia/issues/50746", 0),
    # and while they wait on the pidfile lock another process holds (FileWatching's mkpidlock, Julia 1.10+): a lock a
    # killed or interrupted precompile left blocks every later one until it is judged stale
    ("log-file-lock", "waiting on a lock file (one left by a killed run blocks every later one)",
     r"\bWaiting for another process (?:\(pid:? ?\d{1,10}\) )?to (?:finish precompiling|precompile)\b"
     r"|\bBeing precompiled by another process\b|\battempting to remove probably stale pidfile\b",
     "https://github.com/JuliaLang/julia/pull/49052; https://github.com/JuliaLang/julia/issues/50746", 0),
    # HotSpot's thread dump (jstack, jcmd Thread.print, kill -3) under a frame whose thread is blocked entering a
    # monitor another thread holds: "\t- waiting to lock <0x000000069e3693b8> (a java.lang.Object)" (openjdk's
    # TestClhsdbJstackLock expects exactly that line). Not "- waiting on <0x...>" (a thread in Object.wait(), often an
    # idle one) nor "- parking to wait for" (a java.util.concurrent lock or an idle pool worker)
    ("log-jvm-monitor-wait", "a JVM thread is blocked entering a monitor another thread holds (a thread dump)",
     r"^\s{0,16}- waiting to lock <0x[0-9a-fA-F]{1,16}>",
     "https://github.com/openjdk/jdk/pull/19953; https://github.com/adoptium/adoptium-support/issues/1392", 0),
    # Cargo's status line while another process holds one of its locks (src/cargo/util/flock.rs: "Blocking waiting for
    # file lock on {}"): the package cache, the registry index, the build directory, the git database
    ("log-file-lock", "waiting on a lock file (one left by a killed run blocks every later one)",
     r"\bBlocking waiting for file lock on (?:the )?(?:package cache|registry index|build directory|git database"
     r"|crate metadata|artifact directory)\b",
     "https://github.com/rust-lang/cargo/issues/2566; https://github.com/getzola/zola/issues/179", 0),
    # Ollama's scheduler gives up on a model whose load made no progress within its load timeout (llm/server.go,
    # OLLAMA_LOAD_TIMEOUT: "timed out waiting for llama runner to start - progress 0.00 - "): the weights are still
    # being read (a large model, slow storage, swap), not a runner that died ("llama runner process has terminated")
    ("log-runner-load-timeout", "Ollama timed out waiting for a model's runner to finish loading it (its load timeout)",
     r"\btimed out waiting for llama runner to start\b",
     "https://github.com/ollama/ollama-python/issues/246; https://github.com/ollama/ollama/issues/4131", 0),
    # the kubelet's events for a probe that failed (pkg/kubelet/prober: "Liveness probe failed: <output>", and the
    # container "failed liveness probe, will be restarted"): the container did not answer its probe in time; a
    # refused connect in that line is the kubelet's, to a container not listening yet
    ("log-k8s-probe-failed", "the kubelet's probe of a container failed (it did not answer in time; a failed liveness "
     "probe restarts it)",
     r"\b(?:Liveness|Readiness|Startup) probe failed:|\bfailed (?:liveness|startup) probe, will be restarted\b",
     "https://github.com/kubernetes/kubernetes/issues/18704; https://github.com/kubernetes/kubernetes/issues/62594",
     re.I),
    # Windows' display-driver watchdog (WDDM Timeout Detection and Recovery): a GPU job that runs past TdrDelay (2 s by
    # default) gets the driver reset under it; Event Viewer says "Display driver nvlddmkm stopped responding and has
    # successfully recovered", a bugcheck says VIDEO_TDR_FAILURE, the fix is the TdrDelay / TdrLevel registry key
    ("log-gpu-tdr", "Windows' display-driver watchdog (TDR) reset the GPU under a job that ran too long",
     r"\bDisplay driver [^\n]{0,40}?stopped responding and has (?:successfully )?recovered\b|\bTdr(?:Delay|DdiDelay|Level)\b"
     r"|\bVIDEO_TDR_(?:FAILURE|TIMEOUT_DETECTED)\b|\bTimeout Detection (?:and|&) Recovery\b",
     "https://github.com/hybridizer-io/hybridizer-basic-samples/issues/41; "
     "https://learn.microsoft.com/windows-hardware/drivers/display/tdr-registry-keys", 0),
    # CUDA's error 999 (cudaErrorUnknown, CUDA_ERROR_UNKNOWN) returned by the call that waits for the device: the
    # kernel it waited for was cut off under it (TDR on Windows, a reset); the error at another call is not read
    ("log-cuda-unknown-at-sync", "CUDA's unknown error (999) returned by a wait for the device: the kernel was cut off",
     r"(?:\bCUDA error\b|\bcudaError)[^\n]{0,30}?(?:\b999(?!\d)|cudaErrorUnknown\b|\bunknown error\b)[^\n]{0,120}?"
     r"\b(?:cuda(?:Device|Stream|Event|Thread)Synchronize|cu(?:Ctx|Stream|Event)Synchronize)\b",
     "https://github.com/NVIDIA/cuda-samples/issues/173 (helper_cuda's 'CUDA error at FILE:LINE code=N(name) \"call\"'); "
     "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorUnknown = 999)", 0),
    # macOS's GPU watchdog ends a command buffer that runs too long: Metal reports the buffer's error as "Impacting
    # Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)" or "Caused GPU Timeout Error
    # (00000002:kIOAccelCommandBufferCallbackErrorTimeout)"; the same mechanism as the sixteenth pass's
    # log-gpu-job-timeout (amdgpu's ring timeout, CUDA's launch timeout), kept apart so that row's wording stays its own
    ("log-metal-watchdog", "macOS's GPU watchdog ended a Metal command buffer that ran too long (the GPU never "
     "finished it in time)",
     r"\bkIOGPUCommandBufferCallbackErrorImpactingInteractivity\b|\bkIOAccelCommandBufferCallbackErrorTimeout\b"
     r"|\bCaused GPU Timeout Error\b",
     "https://github.com/gfx-rs/wgpu/pull/9328", 0),
    # a thread of a hung process in Metal's host-side wait for a command buffer, as lldb / sample / a crash report name
    # the frame (-[_MTLCommandBuffer waitUntilCompleted]): the GPU never completed what was committed
    ("log-gpu-wait-frame", "a thread waits in Metal's waitUntilCompleted: the GPU never completed the command buffer",
     r"-\[_?MTL\w{0,40}CommandBuffer waitUntilCompleted\]", "https://github.com/Kode/Kha/issues/993", 0),
    # the cgroup freezer (docker pause, a frozen cgroup): every process in it is held, runs nothing until thawed
    # (docker's docs: "The docker pause command uses the cgroups freezer to suspend all processes"; the daemon's
    # "Container %s is paused. Unpause the container before stopping"; a v1 freezer.state that reads FROZEN)
    ("log-frozen", "the processes are frozen by the cgroup freezer (docker pause, freezer.state FROZEN): they run "
     "nothing until thawed",
     r"\b[Dd]ocker pause\b|\bfreezer\.state\b|\bcgroup\.freeze\b|^\s{0,8}FROZEN\s{0,8}$"
     r"|\bis paused\. Unpause the container\b|\bUp [^\n]{1,40}\(Paused\)",
     "https://github.com/moby/moby/pull/9962; https://github.com/moby/moby/pull/6178", 0),
    # gdb refused by the kernel when it attaches (Yama's ptrace_scope, or a target already gone): "Could not attach to
    # process.  If your uid matches ...", "ptrace: Operation not permitted."; a tool that drives gdb then waits for a
    # debugger that sits at its own prompt
    ("log-attach-refused", "a debugger could not attach (ptrace refused: Yama's ptrace_scope, or no such process)",
     r"^ptrace: (?:Operation not permitted|No such process)\.|\bCould not attach to process\.",
     "https://github.com/Gallopsled/pwntools/issues/973; https://github.com/nasa/trick/issues/616", 0),
)
