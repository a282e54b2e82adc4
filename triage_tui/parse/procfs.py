"""Pure parsers for /proc text: PID/stat, PID/status, meminfo, smaps_rollup, net/tcp.

They take the text a file (or a remote `cat`) produced and never touch the file system, so they
are tested on captured text, malformed text included. Each returns None / {} for text it cannot
use rather than raising: a collector turns that into an Unavailable with a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Optional, Tuple  # noqa: UP035 - a runtime alias below (3.8: no tuple[...])


@lru_cache(maxsize=8)
def _status_needles(keys: frozenset[str]) -> tuple[tuple[str, str, str], ...]:
    return tuple((k, f"\n{k}:", f"{k}:") for k in sorted(keys))


def _picked_fields(text: str, needles: tuple[tuple[str, str, str], ...]) -> dict[str, str]:
    """{key: value} for the wanted "Key:<tab>value" lines, found with str.find: the per-tick path
    needs a dozen of ~60 lines, and a find per key costs half of one MULTILINE regex pass."""
    fields: dict[str, str] = {}
    for key, needle, first in needles:
        at = text.find(needle)
        if at >= 0:
            start = at + len(needle)
        elif text.startswith(first):
            start = len(first)
        else:
            continue
        end = text.find("\n", start)
        fields[key] = text[start:end if end >= 0 else len(text)].strip()
    return fields


_new_tuple = tuple.__new__  # a NamedTuple built from its values in field order, without its __new__


class StatusNumbers(NamedTuple):
    """The per-tick figures of /proc/PID/status, as numbers (None: the line is absent or malformed;
    zombies and kernel threads have no Vm*/Rss* lines). Sizes in bytes."""

    name: Optional[str]
    uid: Optional[int]  # real UID
    rss: Optional[int]
    rss_anon: Optional[int]
    rss_file: Optional[int]
    rss_shmem: Optional[int]
    vms: Optional[int]
    ctx_voluntary: Optional[int]
    ctx_involuntary: Optional[int]
    nspid: tuple[int, ...]


_NUMBER_KEYS = ("Uid", "VmRSS", "RssAnon", "RssFile", "RssShmem", "VmSize", "voluntary_ctxt_switches",
                "nonvoluntary_ctxt_switches")
_NUMBER_NEEDLES = tuple((f"\n{k}:", f"{k}:") for k in _NUMBER_KEYS)


def _status_line(text: str, needle: str, first: str) -> Optional[str]:
    at = text.find(needle)
    if at >= 0:
        start = at + len(needle)
    elif text.startswith(first):
        start = len(first)
    else:
        return None
    end = text.find("\n", start)
    return text[start:end if end >= 0 else len(text)]


# /proc/PID/status as the kernel prints it for a live user process (fs/proc/array.c, Linux 4.x on): the lines
# wanted, in that order, lines between them skipped. Two matches in C instead of ten finds, slices and splits in
# Python (measured: 15.6 -> 7.5 us a status under load, ~11 -> ~5 quiet); a text it does not match (a zombie
# or a kernel thread: no Vm lines; an older kernel's order; anything odd) takes the general path below, and a
# test parses every process's status on the machine both ways and finds them equal.
_SKIP = r"(?:[^\n]*\n)*?"  # whole lines, as few as it takes
_STATUS_HEAD = re.compile(
    r"Name:\t([^\n]*)\n" + _SKIP + r"Uid:\t(\d+)[\t\n]" + _SKIP + r"NSpid:\t([\d\t ]*)\n" + _SKIP
    + r"VmSize:[ \t]*(\d+) kB\n" + _SKIP + r"VmRSS:[ \t]*(\d+) kB\nRssAnon:[ \t]*(\d+) kB\n"
    r"RssFile:[ \t]*(\d+) kB\nRssShmem:[ \t]*(\d+) kB\n")
# the context switches are near the end, past the long signal, capability and CPU-list lines: found from there
_STATUS_TAIL = re.compile(r"voluntary_ctxt_switches:[ \t]*(\d+)\nnonvoluntary_ctxt_switches:[ \t]*(\d+)(?:\n|$)")
_TAIL_KEY = "\nvoluntary_ctxt_switches:"


def parse_status_numbers(text: str) -> StatusNumbers:
    """What the process collector needs from /proc/PID/status: two regular expressions over the kernel's
    layout (the path every changed process takes every tick), else one pass of str.find per key."""
    got = _status_by_layout(text)
    return got[0] if got is not None else _parse_status_numbers_by_key(text)


def _status_by_layout(text: str) -> Optional[tuple[StatusNumbers, int]]:
    """The figures by the kernel's layout, and where the head's match ended (past RssShmem's line); None for
    a text not in that layout."""
    head = _STATUS_HEAD.match(text)
    at = text.rfind(_TAIL_KEY)
    tail = _STATUS_TAIL.match(text, at + 1) if head is not None and at >= 0 and text.find(_TAIL_KEY) == at else None
    if head is None or tail is None:
        return None
    name, uid, nspid, vms, rss, anon, file, shmem = head.groups()
    return _new_tuple(StatusNumbers, (name.strip(), int(uid), int(rss) * 1024, int(anon) * 1024, int(file) * 1024,
                                      int(shmem) * 1024, int(vms) * 1024, int(tail.group(1)), int(tail.group(2)),
                                      tuple(map(int, nspid.split())))), head.end()


# What parse_status_numbers_again keeps of a status parsed by layout: its text from Name to the end of RssShmem's
# line (the head's match, less its last newline), and the figures parsed from that status
StatusHead = Tuple[str, StatusNumbers]  # noqa: UP006 - evaluated at import: tuple[...] is 3.9+


def parse_status_numbers_again(text: str, last: Optional[StatusHead]) -> tuple[StatusNumbers, Optional[StatusHead]]:
    """parse_status_numbers(text), and what to pass with the same process's next status (None: this one is not
    in the kernel's layout). `last`, from an earlier status: when `text` begins with its head byte for byte, then
    a newline, the head's figures (name, UID, memory, NSpid) are last's, and only the context switches are parsed
    (a process that ran and allocated nothing: ~3 of the ~13 us a status here). The same head text matched the
    same way gives the same groups (the match ended at that newline and never read past it), and the context
    switches are found by the very test parse_status_numbers makes."""
    if last is not None:
        head, before = last
        end = len(head)
        if text.startswith(head) and text.startswith("\n", end):
            at = text.rfind(_TAIL_KEY)
            tail = _STATUS_TAIL.match(text, at + 1) if at >= end and text.find(_TAIL_KEY) == at else None
            if tail is not None:
                return _new_tuple(StatusNumbers, (*before[:7], int(tail.group(1)), int(tail.group(2)), before[9])), last
    got = _status_by_layout(text)
    if got is None:
        return _parse_status_numbers_by_key(text), None
    numbers, head_end = got
    return numbers, (text[:head_end - 1], numbers)


def _parse_status_numbers_by_key(text: str) -> StatusNumbers:
    """parse_status_numbers for any text: a str.find per key, the first line that starts with it
    (no dict of strings, no second parse per figure)."""
    values: list[Optional[int]] = []
    for needle, first in _NUMBER_NEEDLES:
        line = _status_line(text, needle, first)
        parts = line.split() if line is not None else []
        try:
            number = int(parts[0])
        except (ValueError, IndexError):
            values.append(None)
            continue
        values.append(number * 1024 if len(parts) > 1 and parts[1].lower() == "kb" else number)
    name = _status_line(text, "\nName:", "Name:")
    nspid_line = _status_line(text, "\nNSpid:", "NSpid:")
    try:
        nspid = tuple(int(x) for x in nspid_line.split()) if nspid_line else ()
    except ValueError:
        nspid = ()
    return StatusNumbers._make((name.strip() if name is not None else None, *values, nspid))


class ProcStat(NamedTuple):
    """The fields of /proc/PID/stat triage uses (see proc(5)); times in clock ticks.
    A NamedTuple (immutable like a frozen dataclass): the table pass builds one for every process
    on the machine every tick, and a tuple is built several times faster."""

    pid: int
    comm: str
    state: str
    ppid: int
    pgrp: int
    majflt: int
    utime: int
    stime: int
    num_threads: int
    starttime: int
    rss_pages: int
    exit_code: Optional[int] = None  # field 52 (Linux >= 3.5): meaningful for a zombie
    flags: int = 0  # field 9: PF_* bits; PF_KTHREAD marks a kernel thread
    children_ticks: int = 0  # fields 16-17 (cutime + cstime): the CPU of the children it waited for (reaped)


def parse_stat(text: str) -> Optional[ProcStat]:
    """Parse one /proc/PID/stat line; None when malformed.

    comm may contain spaces and parentheses ("(sd-pam)", "a) b"), so it runs from the first '('
    to the LAST ')', and the numeric fields are split from there.
    """
    open_at = text.find("(")
    close_at = text.rfind(")")
    if open_at < 0 or close_at < open_at:
        return None
    rest = text[close_at + 1:].split()
    # rest[0] is field 3 (state): field n is rest[n - 3]
    if len(rest) < 22:
        return None
    try:
        # one tuple in field order (ProcStat's own __new__ takes keywords: ~2.4 us more a line, and the tree's
        # follow parses every changed process's line, 1,000 a tick when every process changes)
        return _new_tuple(ProcStat, (
            int(text[:open_at].strip()),  # pid
            text[open_at + 1:close_at],  # comm
            rest[0],  # state
            int(rest[1]),  # ppid
            int(rest[2]),  # pgrp
            int(rest[9]),  # majflt
            int(rest[11]),  # utime
            int(rest[12]),  # stime
            int(rest[17]),  # num_threads
            int(rest[19]),  # starttime
            int(rest[21]),  # rss_pages
            int(rest[49]) if len(rest) >= 50 else None,  # exit_code
            int(rest[6]),  # flags
            int(rest[13]) + int(rest[14]),  # children_ticks
        ))
    except ValueError:
        return None


def parse_status(text: str, keys: Optional[frozenset[str]] = None) -> dict[str, str]:
    """/proc/PID/status as {"VmRSS": "1756 kB", ...}; lines without a colon are skipped.

    With `keys`, only those fields are kept (found one by one: splitting every line dominated
    the per-tick parse cost)."""
    if keys is not None:
        return _picked_fields(text, _status_needles(keys))
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def kb_field_bytes(fields: dict[str, str], key: str) -> Optional[int]:
    """A "1756 kB" field in bytes; None when absent or malformed (zombies and kernel threads have no Vm*)."""
    value = fields.get(key)
    if value is None:
        return None
    parts = value.split()
    try:
        number = int(parts[0])
    except (ValueError, IndexError):
        return None
    if len(parts) > 1 and parts[1].lower() == "kb":
        return number * 1024
    return number


def int_field(fields: dict[str, str], key: str) -> Optional[int]:
    value = fields.get(key)
    try:
        return int(value.split()[0]) if value is not None else None
    except (ValueError, IndexError):
        return None


def parse_kb_table(text: str) -> dict[str, int]:
    """meminfo / smaps_rollup style "Key:   123 kB" lines, in bytes. Malformed lines are skipped."""
    table: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        parts = value.split()
        if not parts:
            continue
        try:
            number = int(parts[0])
        except ValueError:
            continue
        table[key.strip()] = number * 1024 if len(parts) > 1 and parts[1].lower() == "kb" else number
    return table


_IO_BYTES = re.compile(r"\nread_bytes: (\d+)\nwrite_bytes: (\d+)\n")  # lines 5 and 6 of the kernel's io


def parse_io_bytes(text: str) -> tuple[Optional[int], Optional[int]]:
    """(read_bytes, write_bytes) of /proc/PID/io; None for a line that is absent or malformed. The kernel's
    two adjacent lines are found by one search (every changed process's io, every tick); other text is read
    line by line as parse_kb_table reads it."""
    m = _IO_BYTES.search(text)
    if m is not None:
        return int(m.group(1)), int(m.group(2))
    table = parse_kb_table(text)
    return table.get("read_bytes"), table.get("write_bytes")


@dataclass(frozen=True)
class TcpSocket:
    """One row of /proc/net/tcp or tcp6."""

    address: str
    port: int
    state: int  # 0x0A = LISTEN
    inode: int
    family: str  # tcp | tcp6


TCP_LISTEN = 0x0A


def _decode_address(hex_address: str, family: str) -> str:
    import ipaddress

    raw = bytes.fromhex(hex_address)
    if family == "tcp":
        return str(ipaddress.IPv4Address(raw[::-1]))
    # tcp6: four 32-bit words, each in host (little-endian) order
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return str(ipaddress.IPv6Address(words))


def parse_net_tcp(text: str, family: str = "tcp") -> list[TcpSocket]:
    """Rows of /proc/net/tcp{,6}; the header and malformed rows are skipped."""
    sockets: list[TcpSocket] = []
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 10:
            continue
        try:
            hex_address, hex_port = parts[1].split(":")
            sockets.append(TcpSocket(
                address=_decode_address(hex_address, family),
                port=int(hex_port, 16),
                state=int(parts[3], 16),
                inode=int(parts[9]),
                family=family,
            ))
        except ValueError:
            continue
    return sockets
