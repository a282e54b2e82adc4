"""torchrun / torch.distributed.elastic failure lines → which rank died how (exit code, signal, PID).

    [0]:
      time      : 2023-09-14_01:45:50
      rank      : 2 (local_rank: 2)
      exitcode  : -9 (pid: 36071)
      traceback : Signal 9 (SIGKILL) received by PID 36071
    ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 2410412) of binary: ...

Pasted summaries lose their layout (GitHub joins the lines), so each figure is looked for on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EXIT = re.compile(r"exitcode\s{0,12}:?\s{0,12}(-?\d{1,5})\)?\s{0,4}(?:local_rank:\s{0,2}(\d{1,6})\s{0,2})?\(pid:\s{0,2}(\d{1,10})\)")
_RANK = re.compile(r"\brank\s{0,12}:?\s{0,12}(\d{1,6})\s{0,2}\(local[_ ]rank:\s{0,2}(\d{1,6})\)")
SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


@dataclass(frozen=True)
class Failure:
    exitcode: int
    pid: int
    rank: int | None = None

    @property
    def signal(self) -> str:
        return SIGNALS.get(-self.exitcode, f"signal {-self.exitcode}") if self.exitcode < 0 else ""

    def text(self) -> str:
        who = f"rank {self.rank} (PID {self.pid})" if self.rank is not None else f"PID {self.pid}"
        how = f"exit code {self.exitcode}" + (f" ({self.signal})" if self.signal else "")
        return f"{who} {how}"


def failures(text: str) -> list[Failure]:
    """Every `exitcode ... (pid: N)` in the text, with the rank named on the same or the line before."""
    out: list[Failure] = []
    rank: int | None = None
    for line in text.split("\n"):
        if "rank" in line:
            r = _RANK.search(line)
            if r:
                rank = int(r.group(1))
        if "exitcode" in line:
            m = _EXIT.search(line)
            if m:
                f = Failure(int(m.group(1)), int(m.group(3)), rank if rank is not None else
                            (int(m.group(2)) if m.group(2) else None))
                if f not in out:
                    out.append(f)
                rank = None
    return out
