"""One look is enough: a single real dump or summary, pasted alone, yields a ranked cause (with its evidence).

The inputs are the evidence of corpus cases (tests/corpus/cases: real output from public threads), or parts of it.
"""

from __future__ import annotations

from pathlib import Path

from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.pasted_text import diagnose_text

CASES = Path(__file__).resolve().parents[1] / "corpus" / "cases"


def _evidence(name: str) -> str:
    return read_case(CASES / f"{name}.md").evidence


def _top(text: str):
    d = diagnose_text(text)
    top = d.diagnosis.hypotheses[0]
    return d, top


def test_a_single_py_spy_dump_is_diagnosed_from_its_frames() -> None:
    d, top = _top(_evidence("gprofiler-612-future-result"))
    # the dump, and at most the reporter's words for the symptom (told-stall), which rank no cause
    assert [p.kind for p in d.parts if p.used and "told-stall" not in p.used_as] == ["py-spy"]
    assert top.status in ("likely", "possible") and top.for_, top
    assert top.id == "event-never-fires"  # MainThread waits in Future.result; nothing else is known


def test_a_single_gdb_thread_apply_all_bt_is_diagnosed_from_its_frames() -> None:
    d, top = _top(_evidence("pytorch-130610-fork-atexit-lock"))
    assert "gdb" in [p.kind for p in d.parts if p.used]
    assert top.id == "fork-inherited-lock" and top.status == "likely", top
    d, top = _top(_evidence("ceph-27639-gil-and-lock-deadlock"))
    assert top.id == "deadlock" and top.status in ("likely", "possible"), top


def test_a_torchrun_failure_summary_alone_names_the_oom_killer() -> None:
    d, top = _top(_evidence("amvur-2-sigkill-memory-growth"))
    assert top.id == "oom" and top.status in ("likely", "possible"), [(h.id, h.score) for h in d.diagnosis.hypotheses[:3]]
    assert any("SIGKILL" in line for line in top.for_)


def test_a_dmesg_oom_excerpt_alone_is_an_oom() -> None:
    kernel = "\n".join(ln for ln in _evidence("deepseek-vl2-90-oom-killed-loading").splitlines() if ln.startswith("[26002."))
    d, top = _top(kernel)
    assert [p.kind for p in d.parts if p.used] == ["kernel"]
    assert top.id == "oom" and top.status == "likely", top


PS = """USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND
root       46433  0.0 10.1 91234567 4456448 pts/1 Sl+ 10:00   6:40 python3 train.py --local-rank 0
root       46434  0.0 10.1 91234567 4456448 pts/1 Sl+ 10:00   6:40 python3 train.py --local-rank 1
"""
OOM_OTHER = "[26002.109061] Out of memory: Killed process 576419 (postgres) total-vm:78521468kB, anon-rss:54398260kB, file-rss:2628kB, shmem-rss:0kB, UID:1000 pgtables:119448kB oom_score_adj:0"
OOM_OURS = "[26002.109061] Out of memory: Killed process 576419 (python3) total-vm:78521468kB, anon-rss:54398260kB, file-rss:2628kB, shmem-rss:0kB, UID:1000 pgtables:119448kB oom_score_adj:0"


def test_an_oom_kill_of_another_program_is_shown_but_does_not_count() -> None:
    d = diagnose_text(PS + "\n" + OOM_OTHER + "\n").diagnosis
    ids = {o.id for o in d.observations}
    assert "oom-kill-elsewhere" in ids and "oom-kill" not in ids
    assert next(h for h in d.hypotheses if h.id == "oom").status != "likely"


def test_an_oom_kill_tied_in_by_name_or_alone_counts() -> None:
    ours = diagnose_text(PS + "\n" + OOM_OURS + "\n").diagnosis
    assert "oom-kill" in {o.id for o in ours.observations}
    alone = diagnose_text(OOM_OTHER + "\n").diagnosis  # nothing in the paste contradicts it: it is the job's
    assert alone.hypotheses[0].id == "oom"
