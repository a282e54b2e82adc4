"""The twentieth pass (issue 15): readers of tool output whose wording a program fixes (parse/tool_output_rows.py),
from the seen sets' misses. Each reader is tested on a real sample from a public thread outside the corpus (its
address in a comment, the text as posted) and on a negative that must not fire: a hedge, a mention, another message
of the same tool."""

from __future__ import annotations

from pathlib import Path

from tests.unit.paste_diagnosis import word_model_off
from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.pasted_text import diagnose_text

ROOT = Path(__file__).resolve().parents[2]


def _ids(text: str) -> set[str]:
    return {o.id for o in diagnose_text(text).diagnosis.observations}


def _causes(text: str) -> list[str]:
    d = diagnose_text(text).diagnosis
    return [h.id for h in d.hypotheses if h.kind == "cause" and h.status != "ruled out" and h.score > 0]


def _seen(directory: str, name: str) -> tuple[str, str]:
    case = read_case(ROOT / "tests" / "corpus" / directory / name)
    return case.evidence, case.cause


def test_an_abort_on_an_uncaught_cpp_exception_is_a_death() -> None:
    # https://github.com/sim82/papara_nt/issues/4 (libstdc++'s verbose terminate handler, then abort)
    text = ("papara called as:\n./papara_static_x86_64 -t pa.tree -s PA.phylip -q CIR000093_KF260373.fas\n"
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  n1.back != null\n"
            "[1]    8051 abort (core dumped)  ./papara_static_x86_64 -t pa.tree -s PA.phylip -q CIR000093_KF260373.fas\n")
    assert "log-cxx-terminate" in _ids(text)
    assert _causes(text)[:1] == ["crashed-worker"]
    # https://github.com/microsoft/MLOS/issues/227 (the handler's line for a std::thread destroyed while joinable)
    assert "log-cxx-terminate" in _ids("terminate called without an active exception\n"
                                       "make: *** [test] Aborted (core dumped)\n")
    # the seen miss it was written from: rank 1 of an MPICH job dies before MPI_Init, rank 0 waits for it
    evidence, cause = _seen("cases-19", "mpich-6124-mpi-init-waits-for-a-process-that-exited.md")
    assert _causes(evidence)[:1] == [cause] == ["crashed-worker"]
    # not where what the abort reports is a watchdog's timeout: the death follows the wait (torch's ProcessGroupNCCL)
    watchdog = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
                "  what():  [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=28956, "
                "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600058 milliseconds before timing out.\n")
    d = diagnose_text(watchdog).diagnosis
    assert not any(e.observation == "log-cxx-terminate" and e.weight > 0 for h in d.hypotheses for e in h.evidence)
    # a sentence about the handler is not its output
    assert "log-cxx-terminate" not in _ids("std::terminate calls std::abort, which generates a crash dump\n")


def test_julias_precompile_is_compiling_and_its_pidfile_wait_a_lock() -> None:
    # https://github.com/JuliaLang/julia/pull/49052: one process compiles a package, a second waits on its pidfile
    first = "julia> @time using Revise\n[ Info: Precompiling Revise [295af30f-e4ad-537b-8983-00126c2a3abe]\n"
    assert "log-compiling" in _ids(first) and _causes(first)[:1] == ["compiling"]
    second = ("julia> using Revise\n"
              "[ Info: Waiting for another process to precompile Revise [295af30f-e4ad-537b-8983-00126c2a3abe]\n")
    assert "log-file-lock" in _ids(second) and _causes(second)[:1] == ["stale-file-lock"]
    # https://github.com/JuliaLang/julia/issues/50746: Pkg's progress line for a package another (dead) process holds
    held = ("julia> using CodeTracking\nPrecompiling CodeTracking\n  Progress [>                                        ]"
            "  0/1\n  ◓ CodeTracking Being precompiled by another process (pid: 19746)\n")
    assert _causes(held)[:1] == ["stale-file-lock"]
    # Julia 0.4's line, as the seen miss julia-15762 (cases-19) shows it
    evidence, cause = _seen("cases-19", "julia-15762-first-using-gadfly-takes-a-minute.md")
    assert _causes(evidence)[:1] == [cause] == ["compiling"]
    # Pkg's summary once the compile is done is not a compile that runs now
    done = "  1 dependency successfully precompiled in 11 seconds. 44 already precompiled.\n"
    assert "log-compiling" not in _ids(done)


def test_a_failed_kubelet_probe_under_a_cpu_limit_is_starvation_not_a_refused_peer() -> None:
    # https://github.com/kubernetes/kubernetes/issues/18704 (the kubelet's event for a failed liveness probe)
    line = ("Jan 21 06:55:28.262: INFO: event for liveness-http: {kubelet e2e-test-parallel-minion-muge} Unhealthy: "
            "Liveness probe failed: Get http://10.253.6.11:8080/read: read tcp 10.253.6.11:8080: use of closed network "
            "connection\n")
    assert "log-k8s-probe-failed" in _ids(line)
    # alone it is no cause: a probe fails for many reasons (the word model, learned from seen cases that include a
    # probe failing under CPU pressure, may rank it from the words: that is its own row, shown apart)
    with word_model_off():
        assert "cpu-starved" not in _causes(line)
    # the seen miss (cases-19 pomerium-1336): probes refused while the container was held to 100m
    evidence, cause = _seen("cases-19", "pomerium-1336-proxy-fails-liveness-probe-at-start.md")
    assert _causes(evidence)[:1] == [cause] == ["cpu-starved"]
    # the kubelet's other message, a container that keeps exiting (CrashLoopBackOff), is not a failed probe
    assert "log-k8s-probe-failed" not in _ids("  Warning  BackOff    2m (x25 over 7m)  kubelet  Back-off restarting "
                                              "failed container\n")


def test_windows_tdr_and_cudas_unknown_error_at_a_synchronize_are_a_gpu_hang() -> None:
    # https://github.com/hybridizer-io/hybridizer-basic-samples/issues/41 (Windows 7's TDR notice)
    text = ('When running MonteCarloHeatEquation project I recieve "Display driver stopped responding and has '
            'recovered" error in Windows 7and error message in project:\n')
    assert "log-gpu-tdr" in _ids(text) and _causes(text)[:1] == ["gpu-hang"]
    # the seen miss (cases-19 raytracinginoneweekendincuda-7): error 999 from cudaDeviceSynchronize, the screen black
    evidence, cause = _seen("cases-19", "raytracinginoneweekendincuda-7-render-kernel-hits-windows-tdr.md")
    assert "log-cuda-unknown-at-sync" in _ids(evidence)
    assert _causes(evidence)[:1] == [cause] == ["gpu-hang"]
    # CUDA's unknown error at another call (a context that cannot start) is not read as a kernel cut off
    assert "log-cuda-unknown-at-sync" not in _ids("RuntimeError: CUDA error: unknown error\n")
    # and a launch timeout (https://github.com/NVIDIA/cuda-samples/issues/173) is the older row's, not this one's
    timeout = ('CUDA error at C:\\ProgramData\\NVIDIA Corporation\\CUDA Samples\\v11.6\\Samples\\0_Introduction\\matrixMul'
               '\\matrixMul.cu:228 code=702(cudaErrorLaunchTimeout) "cudaEventSynchronize(stop)"\n')
    ids = _ids(timeout)
    assert "log-gpu-job-timeout" in ids and "log-cuda-unknown-at-sync" not in ids


def test_metals_watchdog_and_a_thread_in_wait_until_completed_are_a_gpu_hang() -> None:
    # https://github.com/Kode/Kha/issues/993 (lldb on a frozen Metal app)
    frame = "    frame #2: 0x00007fff4e67c93b Metal`-[_MTLCommandBuffer waitUntilCompleted] + 67\n"
    assert "log-gpu-wait-frame" in _ids(frame) and _causes(frame)[:1] == ["gpu-hang"]
    # https://github.com/gfx-rs/wgpu/pull/9328 (the macOS GPU watchdog's error for a command buffer it killed)
    watchdog = ("the GPU watchdog killing it with `kIOGPUCommandBufferCallbackErrorImpactingInteractivity` — not just "
                "slow successful execution.\n")
    assert "log-metal-watchdog" in _ids(watchdog) and _causes(watchdog)[:1] == ["gpu-hang"]
    # a call in code is not a thread waiting in it
    assert "log-gpu-wait-frame" not in _ids("Every GPU submission used `[cmd waitUntilCompleted]` — an unbounded "
                                            "blocking wait.\n")


def test_the_cgroup_freezer_is_a_stopped_process() -> None:
    # https://github.com/moby/moby/pull/9962 (docker's docs for the command)
    text = "The `docker pause` command uses the cgroups freezer to suspend all processes in\n"
    assert "log-frozen" in _ids(text) and _causes(text)[:1] == ["stopped"]
    # the daemon's refusal to stop a paused container (moby's daemon: "Container %s is paused. Unpause the container
    # before stopping")
    refusal = ("Error response from daemon: Cannot stop container dddc0260161d: Container dddc0260161d531b6aec29a5c296367"
               "94655568609aa576e3da088642530371c is paused. Unpause the container before stopping\n")
    assert "log-frozen" in _ids(refusal)
    # the seen miss (cases-19 criu-20)
    evidence, cause = _seen("cases-19", "criu-20-checkpoint-of-paused-container-stalls.md")
    assert _causes(evidence)[:1] == [cause] == ["stopped"]
    # thawing is not freezing; a word in capitals inside a sentence is not freezer.state
    assert "log-frozen" not in _ids("docker unpause <container_name>\n")
    assert "log-frozen" not in _ids("The screen is FROZEN after login\n")


def test_a_debugger_refused_by_ptrace_leaves_its_driver_waiting() -> None:
    # https://github.com/Gallopsled/pwntools/issues/973 ("Hang on GDB failure, because Docker")
    text = ('$ /usr/bin/gdb -batch -q --nx -ex "set pagination off" -ex "generate-core-file ./core.bash.1030" -ex detach'
            ' -q  "/bin/bash" 1030\n'
            "Could not attach to process.  If your uid matches the uid of the target\n"
            "process, check the setting of /proc/sys/kernel/yama/ptrace_scope, or try\n"
            "again as the root user.  For more details, see /etc/sysctl.d/10-ptrace.conf\n"
            "ptrace: Operation not permitted.\n"
            "/home/pwntools/pwntools/1030: No such file or directory.\n")
    assert "log-attach-refused" in _ids(text) and _causes(text)[:1] == ["event-never-fires"]
    # the seen miss (cases-19 pyflyby-142: gdb -p answers "ptrace: No such process.")
    evidence, cause = _seen("cases-19", "pyflyby-142-remote-debugger-attach-hangs-without-ptrace.md")
    assert _causes(evidence)[:1] == [cause] == ["event-never-fires"]
    # strace's own refusal (https://github.com/hishamhm/htop/issues/131) is another tool's message, not read here
    assert "log-attach-refused" not in _ids("strace: attach: ptrace(PTRACE_ATTACHE,...) Operation not permitted\n")


def test_cargos_lock_wait_is_a_lock_and_ollamas_load_timeout_a_load() -> None:
    # https://github.com/rust-lang/cargo/issues/2566 and https://github.com/getzola/zola/issues/179 (Cargo's status line)
    for line in ("$ cargo build\n    Blocking waiting for file lock on the git database\n",
                 "    Blocking waiting for file lock on build directory\n"):
        assert "log-file-lock" in _ids(line) and _causes(line)[:1] == ["stale-file-lock"], line
    # the seen miss (cases-16 cargo-15094, read as an OOM from its prose before)
    evidence, cause = _seen("cases-16", "cargo-15094-package-cache-permanently-locked-after-oom.md")
    assert _causes(evidence)[:1] == [cause] == ["stale-file-lock"]
    # Cargo's other status lines are no lock
    assert "log-file-lock" not in _ids("   Compiling serde v1.0.130\n")
    # https://github.com/ollama/ollama-python/issues/246 (Ollama's scheduler on a load past OLLAMA_LOAD_TIMEOUT)
    line = ("The error I'm getting is `ollama._types.ResponseError: timed out waiting for llama runner to start - "
            "progress 1.00 - `\n")
    assert "log-runner-load-timeout" in _ids(line) and _causes(line)[:1] == ["still-loading"]
    # https://github.com/ollama/ollama/issues/4131 (the older wording, with nothing after the colon)
    assert "log-runner-load-timeout" in _ids("$ ollama run llama3:70b-instruct-q8_0\n"
                                             "Error: timed out waiting for llama runner to start:\n")
    for name in ("ollama-8470-timed-out-waiting-for-llama-runner-large-model-slow-load.md",):
        evidence, cause = _seen("cases-16", name)
        assert _causes(evidence)[:1] == [cause] == ["still-loading"]
    # the same scheduler's message for a runner that died is not a load that takes long
    assert "log-runner-load-timeout" not in _ids("Error: llama runner process has terminated: exit status 2\n")


def test_a_jvm_thread_blocked_on_a_monitor_is_weak_evidence_of_a_deadlock() -> None:
    # https://github.com/adoptium/adoptium-support/issues/1392 (a jstack excerpt: main blocked on a JarFile monitor)
    text = ('"main" ... BLOCKED (on object monitor)\n  at java.util.jar.JarFile.ensureInitialization(...)\n'
            "  - waiting to lock <0x00000000c02fae78> (a java.util.jar.JarFile)\n")
    assert "log-jvm-monitor-wait" in _ids(text)
    (h,) = [h for h in diagnose_text(text).diagnosis.hypotheses if h.id == "deadlock"]
    assert 0 < h.score < 0.5  # weak: a holder that is slow, not waiting, reads the same
    # the seen miss (cases-19 jajuk-1022: a Swing worker's dump cut before the JVM's detector line)
    evidence, cause = _seen("cases-19", "jajuk-1022-refreshing-device-window-never-closes.md")
    assert _causes(evidence)[:1] == [cause] == ["deadlock"]
    # where the detector's verdict is there, it decides alone (this row adds nothing)
    dump = (Path(__file__).parent / "fixtures" / "paste" / "jstack_openjdk17_found_one_deadlock.txt").read_text()
    d = diagnose_text(dump).diagnosis
    assert not any(e.observation == "log-jvm-monitor-wait" and e.weight > 0 for h in d.hypotheses for e in h.evidence)
    # https://github.com/spotify/threaddump-analyzer/issues/11: a thread in Object.wait() (often idle) is not blocked
    # entering a monitor, nor is a thread parked on a java.util.concurrent lock
    assert "log-jvm-monitor-wait" not in _ids("        - waiting on <0x000000070006f990> (a sun.misc.GC$LatencyLock)\n")
    assert "log-jvm-monitor-wait" not in _ids("\t- parking to wait for  <0x00000000c1a2b3c4> (a "
                                              "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n")
