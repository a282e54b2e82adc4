"""parse_status_numbers: the per-tick /proc/PID/status figures as numbers, from captured text."""

from __future__ import annotations

from triage_tui.parse.procfs import StatusNumbers, parse_status, parse_status_numbers

LIVE = (
    "Name:\tpython3 worker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t1\n"
    "Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nNStgid:\t4242\t7\nNSpid:\t4242\t7\n"
    "VmPeak:\t  20000 kB\nVmSize:\t   18000 kB\nVmHWM:\t    9000 kB\nVmRSS:\t    8000 kB\n"
    "RssAnon:\t    5000 kB\nRssFile:\t    2500 kB\nRssShmem:\t     500 kB\nThreads:\t1\n"
    "voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3"  # no newline after the last line
)
ZOMBIE = "Name:\tdefunct\nState:\tZ (zombie)\nUid:\t0\t0\t0\t0\nNSpid:\t99\nThreads:\t1\n" \
         "voluntary_ctxt_switches:\t2\nnonvoluntary_ctxt_switches:\t0\n"


def test_live_process_figures_in_bytes() -> None:
    n = parse_status_numbers(LIVE)
    assert n == StatusNumbers(name="python3 worker", uid=1000, rss=8000 * 1024, rss_anon=5000 * 1024,
                              rss_file=2500 * 1024, rss_shmem=500 * 1024, vms=18000 * 1024, ctx_voluntary=17,
                              ctx_involuntary=3, nspid=(4242, 7))


def test_agrees_with_the_general_parser() -> None:
    fields = parse_status(LIVE)
    n = parse_status_numbers(LIVE)
    assert n.name == fields["Name"] and str(n.ctx_involuntary) == fields["nonvoluntary_ctxt_switches"]
    assert n.rss == int(fields["VmRSS"].split()[0]) * 1024


def test_zombie_has_no_memory_lines_and_they_are_none_not_zero() -> None:
    n = parse_status_numbers(ZOMBIE)
    assert (n.rss, n.rss_anon, n.rss_file, n.rss_shmem, n.vms) == (None, None, None, None, None)
    assert (n.uid, n.ctx_voluntary, n.nspid) == (0, 2, (99,))


def test_malformed_or_empty_text_gives_none() -> None:
    n = parse_status_numbers("VmRSS:\tlots kB\nNSpid:\tx y\nName:")
    assert n.rss is None and n.nspid == () and n.name == "" and n.uid is None
    assert parse_status_numbers("") == StatusNumbers(None, None, None, None, None, None, None, None, None, ())


def test_a_key_inside_another_line_is_not_taken() -> None:
    # "VmRSS:" must start a line: a process named "VmRSS: 1 kB" must not feed the RSS figure
    n = parse_status_numbers("Name:\tx VmRSS: 1 kB\nVmRSS:\t  42 kB\n")
    assert n.rss == 42 * 1024
