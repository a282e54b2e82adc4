"""A pasted Python script (a reproducer, not its output) → the library calls it makes.

Reporters often paste the program instead of what it printed ("You can reproduce the issue with the following
script", then `import ray ... ray.wait([x_id])  # This hangs.`). No tool output is in it, but it says which library
the job drives and which of its calls the reporter waits in; that is read and said (`pasted-code`, shown, ranking
no cause: a call is where a job waits, not why).

A part is code when most of its lines have the shape of Python statements and one of them is a statement prose
never has (an import, a def or class, a decorator, an assignment from a call). The calls named are those of the
modules the paste imports (`import ray` → `ray.init(`, `@ray.remote(`), in the order first seen. Lines are matched
one at a time with linear patterns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_IMPORT = re.compile(r"^\s{0,8}import ([\w.]{1,80})(?: as (\w{1,40}))?\s*(?:#.{0,200})?$")
_FROM = re.compile(r"^\s{0,8}from ([\w.]{1,80}) import \(?([\w, ]{1,300})\)?\s*(?:#.{0,200})?$")
_STRONG = re.compile(r"^\s{0,16}(?:import [\w.]|from [\w.]{1,80} import |def \w{1,80}\(|class \w{1,80}[(:]|@[\w.]{1,80}"
                     r"|[\w.\[\]]{1,80} ?= ?[\w.\[]{1,80}\()")
_SHAPED = re.compile(r"^\s{0,16}(?:return\b|pass$|print\(|for \w{1,40}(?:, ?\w{1,40})? in |while |if |elif |else:|try:"
                     r"|except\b|with |raise |assert |[\w.\[\]\"', ]{1,120} ?[-+*/]?= ?\S|[\w.\[\]]{1,120}\(.{0,300}\)\s*"
                     r"(?:#.{0,200})?$|[)\]}],?$|\w{1,40}=[^=]{1,200},?$|#|\S[^\n]{0,200},$|\[\.\.\.\]$)")
_ASSIGNED = re.compile(r"^\s{0,16}(?:for )?([A-Za-z_]\w{0,40})\b(?:, ?\w{1,40})?(?: ?=(?!=)| in )|\bas (\w{1,40})")
_CALL = re.compile(r"@?\b([A-Za-z_]\w{0,40})\.([A-Za-z_]\w{0,40})\s?\(")


def is_code(lines: Sequence[str], names: Sequence[str] = ()) -> bool:
    """Most lines shaped as statements and one a statement prose never has, or (a script's blank lines split it in
    parts) a call on a module the paste imported above. One line is code only when it is an import or such a call."""
    body = [ln for ln in lines if ln.strip()]
    strong = sum(1 for ln in body if _STRONG.match(ln) or any(m.group(1) in names for m in _CALL.finditer(ln)))
    if not body or not strong or len(body) == 1 and not (_IMPORT.match(body[0]) or _FROM.match(body[0]) or names
                                                          and strong):
        return False
    shaped = sum(1 for ln in body if _STRONG.match(ln) or _SHAPED.match(ln))
    return shaped * 4 >= len(body) * 3


def imported(lines: Sequence[str]) -> dict[str, str]:
    """Names the lines import → the module each stands for (`import numpy as np` → np: numpy)."""
    names: dict[str, str] = {}
    for ln in lines:
        m = _IMPORT.match(ln)
        if m:
            names[m.group(2) or m.group(1).split(".")[0]] = m.group(1) if m.group(2) else m.group(1).split(".")[0]
            continue
        m = _FROM.match(ln)
        if m:
            for name in m.group(2).split(","):
                word = name.strip().split(" as ")[-1].strip()
                if word.isidentifier():
                    names[word] = f"{m.group(1)}.{name.strip().split(' as ')[0].strip()}"
    return names


def calls(lines: Sequence[str], names: dict[str, str]) -> tuple[str, ...]:
    """The calls the lines make on imported modules (`ray.get`, `@ray.remote`), first seen first, without repeats."""
    out: dict[str, None] = {}
    if not names:  # a script pasted without its imports: receivers it never assigns are modules (`ray.init()`)
        assigned = {m.group(1) for ln in lines for m in _ASSIGNED.finditer(ln)} | {"self", "cls"}
        names = {m.group(1): m.group(1) for ln in lines for m in _CALL.finditer(ln.split("#", 1)[0])
                 if m.group(1).islower() and m.group(1) not in assigned}
    for ln in lines:
        code = ln.split("#", 1)[0]
        for m in _CALL.finditer(code):
            if m.group(1) in names:
                out[f"{names[m.group(1)]}.{m.group(2)}"] = None
    return tuple(out)
