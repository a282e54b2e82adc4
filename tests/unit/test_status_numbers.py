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


def test_the_kernel_layout_path_equals_the_general_path_on_every_process_here() -> None:
    # the one-regex path (the kernel's layout) must give what the per-key path gives, for every status on this
    # machine (live processes, kernel threads, zombies where there are some: those take the general path)
    import os

    from triage_tui.parse.procfs import _STATUS_HEAD, _parse_status_numbers_by_key

    matched = 0
    for name in os.listdir("/proc"):
        if not name.isdecimal():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                text = f.read()
        except OSError:
            continue
        assert parse_status_numbers(text) == _parse_status_numbers_by_key(text), name
        matched += _STATUS_HEAD.match(text) is not None
    assert matched > 0  # the fast path was taken at all (this process's own status, at least)


def test_the_layout_path_gives_none_for_what_it_cannot_read_as_the_general_path_does() -> None:
    # a status out of the kernel's order, or with a unit the layout does not expect, is read by key
    out_of_order = LIVE.replace("VmSize:\t   18000 kB\n", "") + "\nVmSize:\t   18000 kB\n"
    assert parse_status_numbers(out_of_order).vms == 18000 * 1024
    in_pages = LIVE.replace("VmRSS:\t    8000 kB", "VmRSS:\t    8000")
    assert parse_status_numbers(in_pages).rss == 8000
    twice = LIVE + "\nvoluntary_ctxt_switches:\t99\n"  # the first line of a key counts, as the general path says
    assert parse_status_numbers(twice).ctx_voluntary == 17
    from triage_tui.parse.procfs import _STATUS_HEAD, _parse_status_numbers_by_key

    kernel_like = LIVE.replace("Threads:\t1\n", "Threads:\t1\nSigQ:\t0/96364\n") + "\n"
    assert _STATUS_HEAD.match(kernel_like) is not None
    assert parse_status_numbers(kernel_like) == _parse_status_numbers_by_key(kernel_like)


def test_io_bytes_from_the_kernel_layout_and_from_other_text() -> None:
    from triage_tui.parse.procfs import parse_io_bytes

    io = "rchar: 6976\nwchar: 5\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 7\n"
    assert parse_io_bytes(io) == (4096, 8192)
    assert parse_io_bytes("write_bytes: 3\nread_bytes: 2\ncancelled_write_bytes: 9\n") == (2, 3)
    assert parse_io_bytes("rchar: 1\ncancelled_write_bytes: 9\n") == (None, None)  # never the cancelled line
    assert parse_io_bytes("") == (None, None)


def test_parsed_again_equals_a_whole_parse_with_or_without_the_last_head() -> None:
    # parse_status_numbers_again gives what parse_status_numbers gives, for every status on this machine: with
    # nothing kept, with its own head kept, and with the head of another process's status
    import os

    from triage_tui.parse.procfs import parse_status_numbers_again

    texts = []
    for name in os.listdir("/proc"):
        if name.isdecimal():
            try:
                with open(f"/proc/{name}/status") as f:
                    texts.append(f.read())
            except OSError:
                continue
    other = parse_status_numbers_again(LIVE, None)[1]
    assert other is not None
    kept = 0
    for text in texts:
        whole = parse_status_numbers(text)
        first, head = parse_status_numbers_again(text, None)
        assert first == whole and parse_status_numbers_again(text, other)[0] == whole
        if head is not None:
            kept += 1
            assert parse_status_numbers_again(text, head) == (whole, head)
    assert kept  # live user processes are in the kernel's layout (this test's own, at least)


def test_a_status_with_the_same_head_has_only_its_context_switches_parsed() -> None:
    from triage_tui.parse.procfs import parse_status_numbers_again

    numbers, head = parse_status_numbers_again(LIVE, None)
    assert head is not None and head[0].endswith("RssShmem:\t     500 kB") and head[1] == numbers
    woke = LIVE.replace("voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3",
                        "voluntary_ctxt_switches:\t18\nnonvoluntary_ctxt_switches:\t4")
    again, kept = parse_status_numbers_again(woke, head)
    assert again == parse_status_numbers(woke) and (again.ctx_voluntary, again.ctx_involuntary) == (18, 4)
    assert kept is head
    # the head's figures are the kept ones, not parsed again: kept figures that were never this head's show
    fake = head[1]._replace(rss=1, name="kept")
    assert parse_status_numbers_again(woke, (head[0], fake))[0] == fake._replace(ctx_voluntary=18, ctx_involuntary=4)


def test_a_head_that_moved_is_parsed_whole() -> None:
    from triage_tui.parse.procfs import parse_status_numbers_again

    _, head = parse_status_numbers_again(LIVE, None)
    for moved in (LIVE.replace("VmRSS:\t    8000 kB", "VmRSS:\t    9000 kB"),  # it allocated
                  LIVE.replace("RssShmem:\t     500 kB\n", "RssShmem:\t     500 kB1\n"),  # the head's line goes on
                  LIVE.replace("Name:\tpython3 worker", "Name:\tpython3 w0rker"),  # it renamed itself
                  LIVE.replace("voluntary_ctxt_switches:\t17", "voluntary_ctxt_switches:\tx")):  # a tail it can't read
        got, kept = parse_status_numbers_again(moved, head)
        assert got == parse_status_numbers(moved) and kept is not head
