"""The `m` key's reader: smaps grouped by file, parsed from captured text and read from a real process."""

from __future__ import annotations

import os
import subprocess
import sys

from triage_tui.collect.smaps_files import count_sharers, mappings_by_file, parse_smaps

SMAPS = """\
7f0000000000-7f0040000000 r--s 00000000 08:01 1234                       /models/kimi/model-00001.safetensors
Size:            1048576 kB
Rss:             1048576 kB
Pss:              131072 kB
Shared_Clean:    1048576 kB
Shared_Dirty:          0 kB
Private_Clean:         0 kB
Private_Dirty:         0 kB
Swap:                  0 kB
VmFlags: rd sh mr mw me ms sd
7f0040000000-7f0040100000 r--s 40000000 08:01 1234                       /models/kimi/model-00001.safetensors
Size:               1024 kB
Rss:                1024 kB
Pss:                 128 kB
Shared_Clean:       1024 kB
Private_Clean:         0 kB
55d000000000-55d000200000 rw-p 00000000 00:00 0                          [heap]
Size:               2048 kB
Rss:                2000 kB
Pss:                2000 kB
Private_Dirty:      2000 kB
Swap:                 16 kB
7f1000000000-7f1000400000 rw-p 00000000 00:00 0
Size:               4096 kB
Rss:                 400 kB
Pss:                 400 kB
Private_Dirty:       400 kB
"""


def test_parse_groups_by_file_largest_pss_first():
    rows = parse_smaps(SMAPS)
    assert [r.path for r in rows] == ["/models/kimi/model-00001.safetensors", "[heap]", "[anonymous]"]
    weights = rows[0]
    assert weights.mappings == 2
    assert weights.rss_bytes == (1048576 + 1024) * 1024
    assert weights.pss_bytes == (131072 + 128) * 1024
    assert weights.shared_bytes == weights.rss_bytes and weights.private_bytes == 0
    assert rows[1].swap_bytes == 16 * 1024 and rows[1].private_bytes == 2000 * 1024


def test_sharers_count_the_other_processes_mapping_the_file():
    rows = parse_smaps(SMAPS)
    other = "7f0000000000-7f0040000000 r--s 00000000 08:01 1234 /models/kimi/model-00001.safetensors\n"
    counted = count_sharers(rows, [other, other, "55d000000000-55d000200000 rw-p 00000000 00:00 0 [heap]\n"])
    assert counted[0].shared_by == 3
    assert counted[1].shared_by == 1  # [heap] is never "shared by path"


def test_real_process_mappings_include_its_shared_file(tmp_path):
    """A child maps a file; reading its smaps finds that file, and counts this test process as a sharer."""
    data = tmp_path / "weights.bin"
    data.write_bytes(b"\0" * (4 << 20))
    code = (
        "import mmap,sys\n"
        f"f=open({str(data)!r},'rb'); m=mmap.mmap(f.fileno(),0,prot=mmap.PROT_READ); sum(m[::4096])\n"
        "print('READY',flush=True); sys.stdin.read()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    import mmap

    with open(data, "rb") as f:
        mine = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        try:
            assert child.stdout.readline().strip() == "READY"
            rows = mappings_by_file(child.pid, [child.pid, os.getpid()])
            by_path = {r.path: r for r in rows}
            assert str(data) in by_path
            assert by_path[str(data)].rss_bytes >= 4 << 20
            assert by_path[str(data)].shared_by == 2
        finally:
            mine.close()
            child.kill()
            child.wait()
