"""What part a process plays in a job, before any comparison: launcher, rank, or helper.

Only peers are compared (the odd one out among ranks); helpers are present in healthy jobs too:
multiprocessing's resource tracker (in every spawn-launched job), compilers run by torch.compile /
cpp_extension / Triton (short-lived children that exit 0), inductor's compile workers.
"""

from __future__ import annotations

import os
from functools import lru_cache

from ..model.snapshot import ProcessInfo

COMPILERS = frozenset({"nvcc", "ptxas", "ninja", "cicc", "gcc", "g++", "cc1", "cc1plus", "c++", "clang", "clang++",
                       "ld", "as", "collect2", "cc"})
_HELPER_ARGS = (
    ("multiprocessing.resource_tracker", "multiprocessing resource tracker"),
    ("multiprocessing.forkserver", "multiprocessing fork server"),
    ("torch._inductor.compile_worker", "inductor compile worker"),
    ("multiprocessing.semaphore_tracker", "multiprocessing semaphore tracker"),
)


def program_name(p: ProcessInfo) -> str:
    return os.path.basename(p.cmdline[0]) if p.cmdline else p.name


def helper_role(p: ProcessInfo) -> str:
    """"" for a process that may be a rank or a launcher; else what helper it is."""
    return _helper_role(p.name, tuple(p.cmdline))  # tuple() of a tuple is itself: no copy


@lru_cache(maxsize=8192)
def _helper_role(name: str, cmdline: tuple[str, ...]) -> str:
    """By name and argv, once each: the engine asks for every process of the tree every tick."""
    if (os.path.basename(cmdline[0]) if cmdline else name) in COMPILERS or name in COMPILERS:
        return "compiler"
    joined = " ".join(cmdline[:4])
    for marker, role in _HELPER_ARGS:
        if marker in joined:
            return role
    return ""


def is_compiler_name(name: str) -> bool:
    return os.path.basename(name) in COMPILERS
