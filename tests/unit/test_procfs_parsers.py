"""Parsers for captured /proc text, malformed text included."""

from __future__ import annotations

import pytest

from triage_tui.collect.memory import smaps_figure_from_text, system_memory_from_meminfo
from triage_tui.model import is_known
from triage_tui.parse.procfs import (
    ProcStat,
    kb_field_bytes,
    parse_kb_table,
    parse_net_tcp,
    parse_stat,
    parse_status,
)

STAT = ("7780 (cat) R 7774 7774 2972 0 -1 4194304 99 0 3 0 12 5 0 0 20 0 1 0 43278 3133440 360 "
        "18446744073709551615 93998316326912 93998316346793 140721399293504 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 "
        "93998316362800 93998316364416 93998976401408 140721399294688 140721399294708 140721399294708 "
        "140721399295979 0")


def test_stat_fields() -> None:
    stat = parse_stat(STAT)
    assert stat is not None
    assert (stat.pid, stat.comm, stat.state, stat.ppid, stat.pgrp) == (7780, "cat", "R", 7774, 7774)
    assert (stat.majflt, stat.utime, stat.stime, stat.num_threads, stat.starttime, stat.rss_pages) == (
        3, 12, 5, 1, 43278, 360)
    assert stat.exit_code == 0


def test_stat_every_field_from_its_own_position() -> None:
    """parse_stat builds its tuple by position: a line whose field n holds 1000 + n gives each named field its own
    field's number (a swapped pair fails here, not only when two figures happen to differ)."""
    line = "1001 (x) S " + " ".join(str(1000 + n) for n in range(4, 53))
    assert parse_stat(line) == ProcStat(pid=1001, comm="x", state="S", ppid=1004, pgrp=1005, majflt=1012, utime=1014,
                                        stime=1015, num_threads=1020, starttime=1022, rss_pages=1024, exit_code=1052,
                                        flags=1009, children_ticks=1016 + 1017)
    assert parse_stat(" ".join(line.split()[:45])).exit_code is None  # a kernel before 3.5: no field 52


@pytest.mark.parametrize("comm", ["a b", "x) R 1 (y", "((sd-pam))", ")", ""])
def test_stat_comm_with_spaces_and_parens(comm: str) -> None:
    stat = parse_stat(STAT.replace("(cat)", f"({comm})"))
    assert stat is not None and stat.comm == comm and stat.state == "R" and stat.ppid == 7774


def test_stat_without_exit_code_field_old_kernel() -> None:
    short = " ".join(STAT.split()[:44])
    stat = parse_stat(short)
    assert stat is not None and stat.exit_code is None


@pytest.mark.parametrize("text", ["", "garbage", "12 (x", "12 (x) S 1 2", "abc (x) " + " ".join(["1"] * 50),
                                  "12 (x) S one 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22"])
def test_malformed_stat_is_none(text: str) -> None:
    assert parse_stat(text) is None


def test_status_memory_split_and_zombie() -> None:
    fields = parse_status("Name:\tpython3\nState:\tS (sleeping)\nVmRSS:\t  927000 kB\nRssAnon:\t 1000 kB\n"
                          "RssFile:\t 2 kB\nNSpid:\t46294\t12\nno colon here\nVmSize:\tnot-a-number kB\n")
    assert fields["Name"] == "python3"
    assert kb_field_bytes(fields, "VmRSS") == 927000 * 1024
    assert kb_field_bytes(fields, "RssShmem") is None  # absent, as in a zombie's status
    assert kb_field_bytes(fields, "VmSize") is None  # malformed
    assert fields["NSpid"].split() == ["46294", "12"]


MEMINFO = """MemTotal:       24683652 kB
MemFree:        24164376 kB
MemAvailable:   24321580 kB
Buffers:           10448 kB
Cached:           361092 kB
SwapCached:            0 kB
Shmem:              8956 kB
SReclaimable:      40876 kB
SwapTotal:       2097148 kB
SwapFree:        2097000 kB
Bogus line without number:
HugePages_Total:       0
"""


def test_meminfo_gives_what_free_prints() -> None:
    table = parse_kb_table(MEMINFO)
    assert table["HugePages_Total"] == 0 and "Bogus line without number" not in table
    system = system_memory_from_meminfo(table)
    assert system.total_bytes == 24683652 * 1024
    assert system.used_bytes == (24683652 - 24321580) * 1024  # procps-ng 4: total - available
    assert system.buff_cache_bytes == (10448 + 361092 + 40876) * 1024
    assert system.shared_bytes == 8956 * 1024
    assert system.swap_used_bytes == 148 * 1024


def test_meminfo_without_available_falls_back_and_missing_keys_are_unavailable() -> None:
    system = system_memory_from_meminfo(parse_kb_table("MemTotal: 1000 kB\nMemFree: 100 kB\nCached: 200 kB\n"))
    assert system.used_bytes == (1000 - 100 - 200) * 1024
    assert not is_known(system.available_bytes) and "MemAvailable" in system.available_bytes.reason
    assert not is_known(system.swap_used_bytes)
    empty = system_memory_from_meminfo(parse_kb_table("total nonsense"))
    assert not is_known(empty.total_bytes) and not is_known(empty.used_bytes)


ROLLUP = """55cb32f49000-7fffc4ae1000 ---p 00000000 00:00 0                          [rollup]
Rss:                1756 kB
Pss:                 299 kB
Shared_Clean:       1600 kB
Private_Clean:        40 kB
Private_Dirty:       116 kB
Swap:                  8 kB
"""


def test_smaps_rollup_pss_uss_swap() -> None:
    figure = smaps_figure_from_text(1, ROLLUP, read_at=100.0, cost_ms=1.5)
    assert (figure.pss_bytes, figure.uss_bytes, figure.swap_bytes) == (299 * 1024, 156 * 1024, 8 * 1024)


def test_empty_smaps_rollup_is_unavailable_not_zero() -> None:
    figure = smaps_figure_from_text(1, "", read_at=100.0, cost_ms=0.1)
    assert not is_known(figure.pss_bytes) and "empty" in figure.pss_bytes.reason  # type: ignore[union-attr]


ROLLUP_FULL = """560c41ceb000-7ffe0bb69000 ---p 00000000 00:00 0                          [rollup]
Rss:                1696 kB
Pss:                 375 kB
Pss_Dirty:           112 kB
Pss_Anon:            112 kB
Pss_File:            263 kB
Pss_Shmem:             0 kB
Shared_Clean:       1548 kB
Shared_Dirty:          0 kB
Private_Clean:        36 kB
Private_Dirty:       112 kB
Referenced:         1696 kB
Anonymous:           112 kB
KSM:                   0 kB
LazyFree:              0 kB
AnonHugePages:         0 kB
ShmemPmdMapped:        0 kB
FilePmdMapped:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:       0 kB
Swap:                 20 kB
SwapPss:              10 kB
Locked:                0 kB
"""


def _by_table(text: str) -> tuple[object, object, object]:
    table = parse_kb_table(text)
    return (table["Pss"], table.get("Private_Clean", 0) + table.get("Private_Dirty", 0), table.get("Swap", 0))


def test_smaps_rollup_found_by_key_is_what_the_whole_table_says() -> None:
    # Pss_Dirty, Pss_Anon and SwapPss share a prefix with the keys looked for: each key is the one of its line
    texts = [ROLLUP, ROLLUP_FULL]
    try:
        with open("/proc/self/smaps_rollup") as f:
            texts.append(f.read())
    except OSError:
        pass
    for text in texts:
        figure = smaps_figure_from_text(1, text, read_at=100.0, cost_ms=0.1)
        assert (figure.pss_bytes, figure.uss_bytes, figure.swap_bytes) == _by_table(text)
    figure = smaps_figure_from_text(1, ROLLUP_FULL, read_at=100.0, cost_ms=0.1)
    assert (figure.pss_bytes, figure.uss_bytes, figure.swap_bytes) == (375 * 1024, 148 * 1024, 20 * 1024)


def test_smaps_rollup_a_changed_figure_is_the_new_one() -> None:
    before = smaps_figure_from_text(1, ROLLUP_FULL, read_at=100.0, cost_ms=0.1)
    moved = ROLLUP_FULL.replace("Pss:                 375 kB", "Pss:              409600 kB")
    moved = moved.replace("Private_Dirty:       112 kB", "Private_Dirty:    204800 kB").replace(
        "Swap:                 20 kB", "Swap:                  0 kB")
    after = smaps_figure_from_text(1, moved, read_at=102.0, cost_ms=0.1)
    assert before.pss_bytes == 375 * 1024 and after.pss_bytes == 409600 * 1024
    assert after.uss_bytes == (36 + 204800) * 1024 and after.swap_bytes == 0


def test_smaps_rollup_not_as_usual_is_parsed_whole() -> None:
    # a key missing (USS from what is there, as before) or printed otherwise: the whole table decides
    no_clean = ROLLUP_FULL.replace("Private_Clean:        36 kB\n", "")
    figure = smaps_figure_from_text(1, no_clean, read_at=100.0, cost_ms=0.1)
    assert (figure.pss_bytes, figure.uss_bytes, figure.swap_bytes) == (375 * 1024, 112 * 1024, 20 * 1024)
    no_unit = ROLLUP_FULL.replace("Swap:                 20 kB", "Swap:                 20")
    figure = smaps_figure_from_text(1, no_unit, read_at=100.0, cost_ms=0.1)
    assert (figure.pss_bytes, figure.swap_bytes) == (375 * 1024, 20)
    first_line = "Pss: 5 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 2 kB\nSwap: 0 kB\n"  # no header line before Pss
    figure = smaps_figure_from_text(1, first_line, read_at=100.0, cost_ms=0.1)
    assert (figure.pss_bytes, figure.uss_bytes, figure.swap_bytes) == (5 * 1024, 3 * 1024, 0)


NET_TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 640 1 0 100 0 0 10 0
   1: 020200C0:BEE4 507100CB:0050 06 00000000:00000000 03:00000D8A 00000000     0        0 0 3 0
   2: broken line
   3: ZZZZ:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 641 1 0
"""

NET_TCP6 = """  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F40 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0
"""


def test_net_tcp_rows() -> None:
    rows = parse_net_tcp(NET_TCP, "tcp")
    assert [(r.address, r.port, r.state, r.inode) for r in rows] == [
        ("127.0.0.1", 8000, 0x0A, 640), ("192.0.2.2", 48868, 0x06, 0)]
    v6 = parse_net_tcp(NET_TCP6, "tcp6")
    assert [(r.address, r.port, r.inode, r.family) for r in v6] == [("::1", 8000, 777, "tcp6")]


def test_refresh_period_grows_with_rss_and_read_cost() -> None:
    from triage_tui.collect.memory import SmapsReader

    assert SmapsReader.refresh_period_s(0, 0.1, 100, 2) == 2
    assert SmapsReader.refresh_period_s(8 * 2**30, 0.1, 100, 2) == 16  # 8 GiB: every 8th tick
    assert SmapsReader.refresh_period_s(0, 50, 100, 2) == 4  # a read costing half the budget
    assert SmapsReader.refresh_period_s(2**50, 0.1, 100, 2) == SmapsReader.MAX_REFRESH_S
