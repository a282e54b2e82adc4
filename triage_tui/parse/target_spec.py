"""A TARGET as written: a PID, name:REGEX or :PORT, checked for its form alone (nothing is read).

`triage` checks its targets with this before the app opens, so a malformed one is a one-line usage error
at once, before anything is drawn; collect/targets.py resolves them from the same reading (one rule).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Union

from ..model.options import TargetSpecError


class TargetSpec(NamedTuple):
    kind: str  # "pid", "name" or "port"
    value: Union[int, str]  # the PID, the regex, or the port


def read_target_spec(spec: str) -> TargetSpec:
    """What `spec` asks for; raises TargetSpecError (a usage error) when it is malformed."""
    text = spec.strip()
    if text.isdecimal():
        return TargetSpec("pid", int(text))
    if text.startswith("name:"):
        pattern = text[5:]
        if not pattern:
            raise TargetSpecError(f"malformed target {spec!r}: empty regex after 'name:'")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise TargetSpecError(f"regex in {spec!r} does not compile: {exc}") from None
        return TargetSpec("name", pattern)
    if text.startswith(":"):
        try:
            port = int(text[1:])
        except ValueError:
            raise TargetSpecError(f"malformed target {spec!r}: the port after ':' must be a number") from None
        if not 1 <= port <= 65535:
            raise TargetSpecError(f"malformed target {spec!r}: port must be 1-65535")
        return TargetSpec("port", port)
    raise TargetSpecError(f"malformed target {spec!r}: expected PID, name:REGEX or :PORT")
