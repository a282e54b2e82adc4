"""Why a capture failed, in words a person can act on; the kernel-view parsers; the CLI's error lines."""

from __future__ import annotations

import subprocess
import sys

import pytest

from triage_tui.collect.stacks import explain_pyspy_failure, permission_problem
from triage_tui.collect.thread_states import kernel_stack_lines, syscall_name

# What py-spy 0.4.3 printed here (RUST_BACKTRACE=1 adds the backtrace, which must not reach the user).
NOT_RUNNING = """Error: Failed to get process executable name. Check that the process is running.

Caused by:
    0: No such file or directory (os error 2)
    1: No such file or directory (os error 2)

Stack backtrace:
   0: <E as anyhow::context::ext::StdError>::ext_context
"""
DENIED = "Permission Denied: Try running again with elevated permissions by going 'sudo env \"PATH=$PATH\" !!'"
SUSPEND = """Error: Failed to get stack traces

Caused by:
    0: Failed to suspend process
    1: unexpected waitpid result PtraceEvent(Pid(8177), SIGSTOP, 128) to 8177
"""
OTHER = """Error: Failed to copy PyThreadState

Caused by:
    0: Bad address (os error 14)

Stack backtrace:
   0: anyhow::error::<impl anyhow::Error>::msg
"""


def test_vanished_process() -> None:
    assert explain_pyspy_failure(5, 1, NOT_RUNNING, alive=True).reason == "process exited during the capture"
    assert explain_pyspy_failure(5, 1, OTHER, alive=False).reason == "process exited during the capture"


def test_permission_denied_goes_to_the_permission_explainer() -> None:
    assert explain_pyspy_failure(5, 1, DENIED, alive=True).reason.startswith("permission denied")


def test_suspend_failure_points_at_another_tracer() -> None:
    error = explain_pyspy_failure(42, 1, SUSPEND, alive=True)
    assert error.reason == "py-spy could not pause the process" and "TracerPid in /proc/42/status" in error.hint


def test_other_failures_keep_py_spys_words_without_the_backtrace() -> None:
    error = explain_pyspy_failure(5, 1, OTHER, alive=True)
    assert error.reason == "py-spy failed: Failed to copy PyThreadState; 0: Bad address (os error 14)"
    assert "anyhow" not in error.reason + error.hint


@pytest.mark.parametrize("euid,owner,scope,cap,reason,hint", [
    (1000, 0, 0, False, "permission denied: PID 9 runs as uid 0, triage as uid 1000", "run triage as that user"),
    (1000, 1000, 1, False, "permission denied: kernel.yama.ptrace_scope=1 allows attaching only to your own children",
     "sudo sysctl kernel.yama.ptrace_scope=0"),
    (0, 1000, 3, True, "permission denied: kernel.yama.ptrace_scope=3 forbids every ptrace attach", "reboot"),
    (0, 1000, 1, False, "permission denied: no CAP_SYS_PTRACE (a container started without it?)",
     "--cap-add SYS_PTRACE"),
    (0, 0, -1, True, "permission denied by ptrace (a non-dumpable target", "container profile"),
    (1000, 1000, 0, False, "permission denied by ptrace (a non-dumpable target", "root"),
])
def test_permission_problems_name_the_fix(euid: int, owner: int, scope: int, cap: bool, reason: str, hint: str) -> None:
    error = permission_problem(9, euid=euid, owner=owner, scope=scope, has_cap=cap)
    assert error.reason.startswith(reason) and hint in error.hint


@pytest.mark.parametrize("text,machine,name", [
    ("202 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f", "x86_64", "futex"),
    ("230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ffd 0x7f", "x86_64", "clock_nanosleep"),
    ("98 0x7f 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f", "aarch64", "futex"),
    ("running", "x86_64", "running"), ("-1 0x7ffd 0x7f", "x86_64", "not in a syscall"),
    ("999 0x0", "x86_64", "syscall 999"), ("", "x86_64", ""),
    # a kernel thread (kworker): no user stack or pc, so not `read` though the number is 0
    ("0 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0", "x86_64", "not in a syscall"),
    ("0 0x3 0x7ffd 0x10 0x0 0x0 0x0 0x7ffd 0x7f", "x86_64", "read"),
])
def test_syscall_names(text: str, machine: str, name: str) -> None:
    assert syscall_name(text, machine) == name


def test_kernel_stack_lines_drop_addresses_and_offsets() -> None:
    text = "[<0>] futex_wait_queue+0x60/0xa0\n[<0>] futex_wait+0x175/0x260\n[<0>] do_syscall_64+0x5b/0x110\n"
    assert kernel_stack_lines(text) == ("futex_wait_queue", "futex_wait", "do_syscall_64")


@pytest.mark.parametrize("argv,message,code", [
    (["stacks", "--ssh", "127.0.0.1:1"], "triage: error:", 1),  # nothing listens on loopback port 1
    (["stacks", "bogus"], "triage: error: malformed target 'bogus'", 2),  # a usage error
    (["stacks", "999999999"], "triage: error:", 1),  # well-formed, finds nothing: a runtime failure
])
def test_cli_errors_are_one_line(argv: list[str], message: str, code: int) -> None:
    out = subprocess.run([sys.executable, "-m", "triage_tui", *argv], capture_output=True, text=True, timeout=60)
    assert out.returncode == code
    assert out.stderr.startswith(message) and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
