"""The eighth pass (issue 15): formats of real tools that the seen sets show and no reader read, each on the text as
posted in a seen case (tests/corpus/cases-7, seen since its one scoring) and checked on the other seen cases they
fire on: a network filesystem's RPC wait in a kernel stack, a refused connect(), NCCL's system-call failure.
"""

from __future__ import annotations

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.signal_lexicon import scan_line


def _diag(text: str):
    return diagnose_text(text).diagnosis


def _causes(text: str) -> list[str]:
    return [h.id for h in _diag(text).hypotheses if h.score > 0 and h.status != "ruled out"]


def _ids(text: str) -> set[str]:
    return {o.id for o in _diag(text).observations}


# https://github.com/cea-hpc/robinhood/issues/111 (a Lustre client's scan thread), as posted
LUSTRE_STACK = """\
 cat /proc/5071/task/5099/stack
[<ffffffffc1191a80>] ptlrpc_set_wait+0x480/0x790 [ptlrpc]
[<ffffffffc1191e13>] ptlrpc_queue_wait+0x83/0x230 [ptlrpc]
[<ffffffffc1361f66>] mdc_xattr_common+0x3f6/0x680 [mdc]
[<ffffffffc1362262>] mdc_getxattr+0x72/0x360 [mdc]
[<ffffffffc0d6cd5b>] lmv_getxattr+0x15b/0x360 [lmv]
[<ffffffffc13e2ce0>] ll_xattr_list+0x240/0x670 [lustre]
[<ffffffff81872f92>] generic_getxattr+0x52/0x70
[<ffffffff81863492>] d_instantiate+0x52/0x70
"""

# the sixth pass's NFS fixture shape (sunrpc under nfs4): the same mechanism, another filesystem
NFS_STACK = """\
$ cat /proc/4242/stack
[<0>] rpc_wait_bit_killable+0x25/0xb0 [sunrpc]
[<0>] __rpc_execute+0x14e/0x430 [sunrpc]
[<0>] rpc_run_task+0x151/0x190 [sunrpc]
[<0>] nfs4_call_sync_sequence+0x64/0xa0 [nfsv4]
[<0>] _nfs4_proc_getattr+0x11b/0x140 [nfsv4]
"""

# a local disk's wait: file I/O, but no network filesystem
LOCAL_STACK = """\
$ cat /proc/4243/stack
[<0>] io_schedule+0x16/0x40
[<0>] folio_wait_bit_common+0x13e/0x360
[<0>] filemap_fault+0x5f2/0x9c0
"""


def test_a_kernel_stack_in_a_network_filesystems_rpc_wait_is_blocked_io() -> None:
    for text, frame in ((LUSTRE_STACK, "ptlrpc_set_wait"), (NFS_STACK, "rpc_wait_bit_killable")):
        d = _diag(text)
        obs = [o for o in d.observations if o.id == "stacks-netfs-rpc"]
        assert obs and obs[0].figures["frame"] == frame
        assert _causes(text)[:1] == ["io-blocked"]
        top = d.hypotheses[0]
        assert any("network filesystem" in line for line in top.for_)
    # a local disk's page wait is file I/O (still-loading leads), never a network filesystem's RPC
    assert "stacks-netfs-rpc" not in _ids(LOCAL_STACK)


# https://github.com/pytorch/pytorch/issues/15592, as posted (node 2 of two; node 0 waits for it)
GLOO_REFUSED = """\
terminate called after throwing an instance of 'gloo::IoException'
  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused
Aborted (core dumped)
"""


def test_a_refused_connect_is_a_network_wait() -> None:
    assert "log-connect-refused" in {s.id for s in scan_line(GLOO_REFUSED.splitlines()[1])}
    assert "log-connect-refused" in {s.id for s in scan_line(
        "ConnectionRefusedError: [Errno 111] Connection refused")}
    assert _causes(GLOO_REFUSED)[:1] == ["network-wait"]
    assert "log-connect-refused" not in {s.id for s in scan_line("connection reset by peer")}


# https://github.com/NVIDIA/nccl/issues/473 (nccl-tests and a model, in a container), as posted
NCCL_SYSTEM_ERROR = """\
fastmoe: Test NCCL failure common.cu:777 'unhandled system error'

RuntimeError: NCCL Error 2: unhandled system error
"""


def test_ncclsystemerror_counts_for_a_full_dev_shm_above_a_crash() -> None:
    assert _causes(NCCL_SYSTEM_ERROR)[:1] == ["shm-exhausted"]
    # it is no proof: the score stays below the rows that see /dev/shm itself fail
    d = _diag(NCCL_SYSTEM_ERROR)
    assert next(h for h in d.hypotheses if h.id == "shm-exhausted").score < 0.6
