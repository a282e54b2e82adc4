"""`cat /proc/PID/stack` (or /proc/PID/task/TID/stack) as pasted → ProcessStacks whose one thread has only the
kernel's view: no Python or native frames, the kernel stack and the wait channel it implies.

    [<0>] futex_do_wait+0x46/0x90
    [<0>] __futex_wait+0x8a/0x100
    [<ffffffffc0a1b2c5>] rpc_wait_bit_killable+0x25/0xb0 [sunrpc]

Older kernels print the address, newer ones `<0>` to anyone without CAP_SYSLOG; the module, when there is one,
follows in brackets. The stack is innermost first, as py-spy's frames are.
"""

from __future__ import annotations

import re
from typing import Optional

from ..model.stacks import ProcessStacks, ThreadStack
from .text_errors import ParseError

LINE = re.compile(r"^\[<[0-9a-fA-F]{1,16}>\] ([\w.$]{1,200})\+0x[0-9a-fA-F]{1,16}/0x[0-9a-fA-F]{1,16}")
# `cat /proc/1234/stack`, `sudo cat /proc/1234/task/1240/stack`
PATH = re.compile(r"/proc/(\d{1,10})/(?:task/(\d{1,10})/)?stack\b")
# what every sleeping task's stack passes through: the wait channel is the first frame below these
_MECHANICS = re.compile(r"^(__)?schedule(_timeout|_hrtimeout\w*|_preempt_disabled)?$|^preempt_schedule|^do_syscall|"
                        r"^entry_SYSCALL|^__x64_sys_|^__se_sys_|^__do_sys_|^ret_from_fork|^x64_sys_call$")


def functions(text: str) -> tuple[str, ...]:
    return tuple(m.group(1) for m in (LINE.match(ln.strip()) for ln in text.splitlines()) if m)


def parse_kernel_stack(text: str, command: str = "") -> tuple[ProcessStacks, ...]:
    """One thread's kernel stack; the PID (and TID) from the `cat /proc/PID/stack` command line before it, if
    pasted (0 otherwise)."""
    names = functions(text)
    if not names:
        raise ParseError("no `[<addr>] function+0x../0x..` kernel stack line found")
    m: Optional[re.Match] = PATH.search(command)
    pid = int(m.group(1)) if m else 0
    tid = int(m.group(2)) if m and m.group(2) else pid
    wchan = next((n for n in names if not _MECHANICS.match(n)), names[0])
    thread = ThreadStack(pid=pid, tid=tid, name="kernel stack", kernel_wchan=wchan, kernel_stack=names)
    return (ProcessStacks(pid=pid, name="", source="/proc/PID/stack", threads=(thread,)),)
