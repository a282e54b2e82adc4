"""Host lists as people and schedulers write them, and hostfiles in the MPI / DeepSpeed style."""

from __future__ import annotations

import pytest

from triage_tui.host.node_list import MAX_NODES, NodeListError, expand_hosts, nodes_from, parse_hostfile


@pytest.mark.parametrize("spec, hosts", [
    ("n[1-3]", ["n1", "n2", "n3"]),
    ("gpu[01-03]", ["gpu01", "gpu02", "gpu03"]),  # zero padding kept as written
    ("gpu[08-10]", ["gpu08", "gpu09", "gpu10"]),
    ("a,b,c", ["a", "b", "c"]),
    ("n[1-2,5],login", ["n1", "n2", "n5", "login"]),
    ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
    ("root@n[1-2]:2222", ["root@n1:2222", "root@n2:2222"]),
    ("node", ["node"]),
    ("[::1]:2222", ["[::1]:2222"]),
    ("a,a,b", ["a", "b"]),
])
def test_expansion(spec: str, hosts: list[str]) -> None:
    assert expand_hosts(spec) == hosts


@pytest.mark.parametrize("spec, words", [
    ("n[1-", "unbalanced"), ("n]1[", "unbalanced"), ("n[3-1]", "backwards"), ("n[a-b]", "bad range"),
    ("", "empty"), (f"n[1-{MAX_NODES + 1}]", "more than"),
])
def test_bad_lists_say_why(spec: str, words: str) -> None:
    with pytest.raises(NodeListError, match=words):
        expand_hosts(spec)


def test_hostfile_ignores_slots_and_comments() -> None:
    text = "# the job\nworker-1 slots=8\nworker-2 slots=8 # spare\n\nworker-[3-4] slots=8\nworker-1\n"
    assert parse_hostfile(text) == ["worker-1", "worker-2", "worker-3", "worker-4"]


def test_hostfile_line_without_host() -> None:
    with pytest.raises(NodeListError, match="line 2"):
        parse_hostfile("a\nslots=8\n")


def test_repeated_ssh_and_hostfiles_merge_in_order(tmp_path) -> None:
    hostfile = tmp_path / "hosts"
    hostfile.write_text("c slots=1\na\n")
    assert nodes_from(["a", "b"], [str(hostfile)]) == ["a", "b", "c"]
    with pytest.raises(NodeListError, match="cannot read hostfile"):
        nodes_from([], [str(tmp_path / "missing")])
