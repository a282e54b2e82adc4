"""A lock wait that a fork left without a holder, read from a pasted dump's frames (diagnose/paste_frames.py).

No seen case of the corpus pastes such frames (they tell the story in words: test_prose_lexicon.py), so the
fixtures are real py-spy 0.4.3 dumps of real stuck programs run here (tests/unit/fixtures/paste/programs/, CPython
3.11): a child forked while another thread was importing a slow module, which then imports it itself and waits on
the module lock forever (import_lock_fork.py); a multiprocessing worker (the fork start method) whose first call
takes a lock a background thread of the parent held at the fork (batcher_lock_fork.py, `py-spy dump --native`);
and, for what must not count, two threads of one process importing the same module (the holder is there) and the
forking parent itself.
"""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.pasted_text import diagnose_text

from tests.unit.paste_diagnosis import ranked

FIX = Path(__file__).parent / "fixtures" / "paste"


def _diag(*names: str):
    return diagnose_text("\n\n".join((FIX / n).read_text() for n in names)).diagnosis


def _causes(*names: str) -> list[str]:
    return ranked(_diag(*names), words=False)  # the word model apart


def _ids(*names: str) -> set[str]:
    return {o.id for o in _diag(*names).observations}


def test_a_forked_child_waiting_on_the_import_lock_no_thread_of_it_holds_is_a_fork_inherited_lock() -> None:
    d = _diag("pyspy_import_lock_forked_child.txt")
    assert [h.id for h in d.hypotheses][:1] == ["fork-inherited-lock"]
    note = next(o for o in d.observations if o.id == "stacks-fork-lock")
    assert "the import lock" in note.text and "_ModuleLock.acquire" in note.text


def test_a_multiprocessing_workers_lock_wait_above_popen_fork_is_a_fork_inherited_lock_not_a_deadlock() -> None:
    d = _diag("pyspy_native_forked_child_lock.txt")
    scores = {h.id: h.score for h in d.hypotheses}
    assert [h.id for h in d.hypotheses][:1] == ["fork-inherited-lock"] and scores["deadlock"] < scores["fork-inherited-lock"]
    assert "popen_fork" in next(o for o in d.observations if o.id == "stacks-fork-lock").text


def test_the_child_beside_its_parent_still_reads_as_the_inherited_lock() -> None:
    # the parent's importing thread holds the lock in the parent, not in the child: another process
    assert _causes("pyspy_import_lock_fork_parent.txt", "pyspy_import_lock_forked_child.txt")[:1] == ["fork-inherited-lock"]


def test_an_import_lock_whose_holder_is_a_thread_of_the_same_process_is_no_fork_lock() -> None:
    assert "stacks-fork-lock" not in _ids("pyspy_import_lock_two_threads.txt")
    assert "stacks-fork-lock" not in _ids("pyspy_import_lock_fork_parent.txt")
    assert "fork-inherited-lock" not in _causes("pyspy_import_lock_two_threads.txt")


def test_a_module_lock_wait_is_classified_as_a_lock() -> None:
    from triage_tui.parse.paste_evidence import evidence_from_paste
    from triage_tui.diagnose.pasted_text import capture_from

    capture = capture_from(evidence_from_paste((FIX / "pyspy_import_lock_two_threads.txt").read_text()).stacks)
    assert capture is not None
    waiting = [t for p in capture.processes for t in p.threads if t.name.startswith("Thread-2")]
    assert waiting and waiting[0].wait_kind == "lock"
