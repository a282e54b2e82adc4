"""What a chat client, a Markdown quote or a shell puts around a pasted line.

`unwrap` removes a quote's `> `, a chat's `[10:32] alice: ` and torch's `[rank0]:` before a line is read;
`PROMPT` and `FENCE` are the lines that end a run of tool output (a shell prompt, a Markdown fence), and
`is_heading` tells a Markdown `# Title` from a root prompt's `# dmesg`.
"""

from __future__ import annotations

import re

PROMPT = re.compile(r"^\s*+(?:[\w.-]{1,64}@[\w.-]{1,64}[^\s$#]{0,200}\s{0,4})?[$#] (\S.*)$")
FENCE = re.compile(r"^\s*+(```|~~~)")
# what a chat or a Markdown quote puts before the pasted text on each line (removed before reading):
# `> `, `[10:32] alice: `, `[10:32 AM] <alice> `, `10:32:05 alice: ` (a log level is never taken for a name)
_QUOTE = re.compile(r"^(?:\s{0,3}>)+ ?")
# torch.distributed prefixes each rank's stderr line (`[rank0]: Traceback ...`; torchrun --tee: `[default0]:`)
_RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d{1,6}\]:")
_CHAT = re.compile(r"^\[?\d{1,2}:\d\d(?::\d\d)?(?:\s?[AaPp][Mm])?\]?\s{1,4}(?:<[\w.@ -]{1,40}>|(?!(?:INFO|WARN|WARNING|ERROR|DEBUG|"
                   r"CRITICAL|FATAL|NOTICE)\b)[A-Za-z][\w.@-]{0,39}:)\s")

_COMMANDS = frozenset({"ps", "free", "top", "htop", "dmesg", "journalctl", "nvidia-smi", "cat", "py-spy", "pystack",
                       "gdb", "curl", "ss", "netstat", "vmstat", "df", "du", "ls", "grep", "tail", "kill", "strace",
                       "python", "python3", "torchrun", "docker", "kubectl", "uptime", "lsof", "sudo", "env"})


def is_heading(line: str) -> bool:
    """`# Title` is a Markdown heading unless its first word is a command a root prompt would run."""
    s = line.lstrip()
    if not s.startswith("#") or s.startswith("#!"):
        return False
    words = s.lstrip("#").split()
    return bool(words) and words[0] not in _COMMANDS and not words[0].startswith(("./", "/"))


def unwrap(line: str) -> str:
    """The line without what a Markdown quote or a chat client put before it."""
    if line[:1] in (">", " ") and _QUOTE.match(line):
        line = _QUOTE.sub("", line, count=1)
    if line[:1].isdigit() or line[:1] == "[":
        m = _CHAT.match(line)
        if m:
            line = line[m.end():]
        elif line.startswith(("[rank", "[default")):
            r = _RANK_PREFIX.match(line)
            if r:  # the prefix and the one space after it: the line's own indentation stays
                rest = line[r.end():]
                line = rest[1:] if rest.startswith(" ") else rest
    return line
