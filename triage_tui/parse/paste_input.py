"""Reading what someone pasted, with bounds: a 50 MB paste, a 10 MB line or `/dev/zero` must end.

`read_paste` replaces `cat FILE` (or reading standard input) for `triage diagnose`. It streams at most
`MAX_BYTES` (the rest is not read at all, so an endless stream ends), cuts every line to `MAX_LINE`
characters (every regex downstream then runs on a bounded line), drops NUL bytes, decodes invalid UTF-8
with replacement characters, and says each of these in `cuts` so the output can name what was cut.
Binary input (mostly control bytes or undecodable) is refused with one sentence instead of being read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

MAX_BYTES = 4 << 20  # far above any paste worth reading; bounds the time of everything after
MAX_LINE = 4096  # characters; a stack frame, a log line or a table row is far shorter
_CHUNK = 1 << 16
_BINARY_SHARE = 0.3  # control or undecodable characters in the first 64 KiB above this share: not text


@dataclass(frozen=True)
class PasteInput:
    text: str
    cuts: tuple[str, ...] = ()  # what was cut or replaced, one sentence each
    error: str = ""  # why nothing can be read (binary, unreadable file); text is empty then


def _read_capped(stream: BinaryIO, budget: int) -> tuple[bytes, bool]:
    """At most `budget` bytes, in chunks, and whether more was there (the rest is never read)."""
    chunks: list[bytes] = []
    got = 0
    while got < budget:
        chunk = stream.read(min(_CHUNK, budget - got))
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        got += len(chunk)
    more = bool(stream.read(1))
    return b"".join(chunks), more


def _binary_share(text: str) -> float:
    head = text[:_CHUNK]
    if not head:
        return 0.0
    bad = sum(1 for ch in head if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f\v\x1b"))
    return bad / len(head)


def _cut_lines(text: str, max_line: int) -> tuple[str, int, int]:
    """(text, lines cut, longest line) with every line cut to `max_line` characters."""
    lines = text.split("\n")
    cut = 0
    longest = 0
    for i, line in enumerate(lines):
        if len(line) > max_line:
            longest = max(longest, len(line))
            lines[i] = line[:max_line] + " [cut]"
            cut += 1
    return "\n".join(lines), cut, longest


def decode_paste(raw: bytes, more: bool = False, max_line: int = MAX_LINE, label: str = "the input") -> PasteInput:
    """Bytes already read (at most MAX_BYTES) → text with every line bounded, or a one-sentence error."""
    nuls = raw.count(b"\x00")
    text = raw.decode("utf-8", errors="replace")
    if _binary_share(text) > _BINARY_SHARE:
        return PasteInput("", error=f"{label} looks binary ({_binary_share(text):.0%} of its first 64 KiB is control "
                                    "bytes or not UTF-8): nothing to diagnose (paste the text output of the tools)")
    cuts: list[str] = []
    if more:
        cuts.append(f"{label} was cut after {MAX_BYTES >> 20} MiB: the rest was not read")
    if nuls:
        text = text.replace("\x00", "")
        cuts.append(f"{nuls} NUL byte(s) dropped")
    bad = text.count("\ufffd")
    if bad:
        cuts.append(f"{bad} byte sequence(s) that are not UTF-8 replaced by U+FFFD")
    text, cut, longest = _cut_lines(text.replace("\r\n", "\n"), max_line)
    if cut:
        cuts.append(f"{cut} line(s) longer than {max_line} characters cut (the longest had {longest})")
    return PasteInput(text, tuple(cuts))


def read_paste(stream: BinaryIO, label: str = "the input", budget: int = MAX_BYTES) -> PasteInput:
    raw, more = _read_capped(stream, budget)
    return decode_paste(raw, more, label=label)


def read_files(names: Sequence[str]) -> PasteInput:
    """Every file, joined by a blank line, within one byte budget for them all."""
    texts: list[str] = []
    cuts: list[str] = []
    budget = MAX_BYTES
    for name in names:
        if budget <= 0:
            cuts.append(f"{name} was not read: the {MAX_BYTES >> 20} MiB budget was spent on the files before it")
            continue
        try:
            with open(name, "rb") as fh:
                raw, more = _read_capped(fh, budget)
        except OSError as exc:
            return PasteInput("", error=f"cannot read {name}: {exc.strerror or exc}")
        budget -= len(raw)
        one = decode_paste(raw, more, label=name)
        if one.error:
            return one
        texts.append(one.text)
        cuts.extend(one.cuts if len(names) > 1 else one.cuts)
    return PasteInput("\n\n".join(texts), tuple(cuts))
