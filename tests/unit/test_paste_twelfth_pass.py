"""The twelfth pass (issue 15), written from the seen sets (tests/corpus/cases .. cases-11), each row right on two
seen sets or more (bench/paste_selection.py reports it per set, and leave-one-set-out): a CPU limit named (a
starved CPU), logging with multiprocessing or a fork (an inherited lock), a model load told slow or still going,
ENOSPC in a job's workers (/dev/shm), and a gdb backtrace whose `#` was lost (one seen set: a reader of gdb's own
output feeding the lock-wait reading). Each on the seen cases' real text and on the
negatives that must not fire.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_script import load_bench_script

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.gdb_text import parse_gdb
from triage_tui.parse.paste_split import split_paste
from triage_tui.parse.prose_lexicon import scan_told

from tests.unit.paste_diagnosis import ranked

FIXTURES = Path(__file__).parent / "fixtures" / "paste"


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def test_a_gdb_backtrace_without_its_hashes_is_read_as_two_lock_waits() -> None:
    # comdb2#4035 (cases-11): two replication threads' `bt`, pasted without gdb's `#`, both in __lll_lock_wait
    text = (FIXTURES / "gdb_bt_no_hash_two_lock_waits.txt").read_text(encoding="utf-8")
    assert [p.kind for p in split_paste(text) if p.kind != "text"] == ["gdb"]
    (proc,) = parse_gdb(text)
    assert [t.frames[0].function for t in proc.threads] == ["__lll_lock_wait", "__lll_lock_wait"]
    # inlined frames, no address
    assert [f.function for f in proc.threads[0].frames[5:7]] == ["berkdb_receive_rtn_int", "berkdb_receive_rtn"]
    assert _causes(text)[:1] == ["deadlock"]


@pytest.mark.parametrize("text", [
    # a numbered list is no backtrace: frame 0 needs its address and " in "
    "0  items were lost\n1  retry (after a minute)\n2  it hangs again",
    "Steps:\n1  start the server (port 8000)\n2  send a request",
])
def test_a_numbered_list_is_no_gdb_backtrace(text: str) -> None:
    assert "gdb" not in [p.kind for p in split_paste(text)]


@pytest.mark.parametrize("text", [
    # nvidia-docker#757 (cases-11): the same job twice as slow at half the CFS quota
    "starting the container with `docker run --runtime nvidia -d --name tftest --cpu-period=100000 "
    "--cpu-quota=50000 --memory=3g server1077:443/custom/tensorflow:wide_deep`",
    # ollama#17916 (cases-11): eight threads in a container pinned to four CPUs
    "The container is pinned to 4 CPUs. `nproc` inside the container correctly reports `4`, but the runner still logs:",
    # 311-data#994 (cases-8): gunicorn's workers time out on half a vCPU
    "The app is currently CPU bound. We may want to run some more locust tests and/or change the CPU setting in "
    "production (currently we're at 0.5 vCPUs).",
    # hypergbm#93 (cases-10): a k8s pod that sees every CPU of the node under its limit
    "We found the k8s pod can watch all cpu even if it has the resource limits.",
])
def test_a_cpu_limit_told_is_a_starved_cpu(text: str) -> None:
    assert "told-word-cpu-limit" in {s.id for s in scan_told(text)}
    assert _causes(text)[:1] == ["cpu-starved"]


@pytest.mark.parametrize("line", [
    "the GPU memory limit is 24 GB",
    "we hit the API rate limit after 100 requests",
    "CPU usage is at 100 % on one core",
    "a time limit of 10 minutes per job",
    "the job hits the CPU memory limit of the pod and is killed",
    "we limit the CPU RAM to 64 GB",
])
def test_other_limits_are_no_cpu_limit(line: str) -> None:
    assert "told-word-cpu-limit" not in {s.id for s in scan_told(line)}


@pytest.mark.parametrize("text", [
    # multiprocessing-logging#26 (cases-11), as posted
    "I believe this is causing a deadlock in my project.   Currently I have certain processes which will "
    "unexpectedly stop mid-processing with no exceptions, this problem goes away when I disable "
    "multiprocessing-logging.",
    # prunemate#29 (cases-7): a scheduler thread logs, then gunicorn's arbiter forks the worker
    "1. \"Scheduler started\" / APScheduler thread begins running and logging\n"
    "2. \"Starting gunicorn\" \u2014 arbiter forks the gthread worker",
])
def test_logging_told_with_multiprocessing_or_a_fork_is_an_inherited_lock(text: str) -> None:
    # a paragraph is read as one line too (the list's two items here)
    assert "told-word-fork-logging" in {o.id for o in diagnose_text(text).diagnosis.observations}
    assert _causes(text)[:1] == ["fork-inherited-lock"]


@pytest.mark.parametrize("line", [
    # lightning#5865 (cases-7, a collective mismatch): loggers with threads, no fork
    "loggers (in case of wandb multithreading) - os.environ[\"WANDB_START_METHOD\"] = \"thread\"",
    "logging to stdout works, the training hangs at step 3",
    "I added logging in my fork of the repo and it still hangs",
])
def test_logging_alone_is_no_inherited_lock(line: str) -> None:
    assert "told-word-fork-logging" not in {s.id for s in scan_told(line)}


@pytest.mark.parametrize("text", [
    # vllm#35547 (cases-4)
    "When loading weights take very long (e.g., first-time loading), the server fails to start with the following "
    "error:",
    # kolors-wrapper#6 (cases-10), as posted
    'whait is  "Loading checkpoint shards:", why "Loading checkpoint shards:"  take me so long time',
])
def test_a_model_load_told_slow_is_still_loading(text: str) -> None:
    assert "told-word-load-slow" in {s.id for s in scan_told(text)}


@pytest.mark.parametrize("line", [
    # sglang#39128 (cases-2, a rank the others wait for): "model loading" alone says nothing of its speed
    "the barrier after model loading times out on rank 3",
    "loading the model works, the first request hangs",
    "still waiting for rank 1",
])
def test_model_loading_named_alone_is_no_slow_load(line: str) -> None:
    assert "told-word-load-slow" not in {s.id for s in scan_told(line)}


def test_no_space_left_in_a_workers_collective_is_shm_not_a_crash() -> None:
    # xpk#965 (cases-11): torchrun's failure summary of a rank whose broadcast failed with ENOSPC on /dev/shm; the
    # same reading is right on three cases-4 pastes (megatron-878, nccl-342, xgboost-5963)
    text = (FIXTURES / "torchrun_summary_no_space_left.txt").read_text(encoding="utf-8")
    assert _causes(text)[:2] == ["shm-exhausted", "crashed-worker"]
    # a container given its own /dev/shm size: the space that ran out is the disk's
    sized = "docker run --shm-size=32g --gpus all trainer:latest\n" + text
    assert "shm-exhausted" not in _causes(sized)


def test_the_selection_report_names_rows_and_readers_that_exist() -> None:
    # bench/paste_selection.py switches each item off by its rows and patterns: a renamed row would make its
    # leave-one-set-out figure silently wrong, so each must be in the live tables
    from triage_tui.diagnose.rules import ROWS

    selection = load_bench_script("paste_selection")
    from triage_tui.diagnose import hypotheses

    live = {(r.hypothesis, r.when) for r in ROWS}
    # what the report switches off is what the engine scores from
    assert {(r.hypothesis, r.when) for rows in hypotheses._ROWS_BY.values() for r in rows} == live
    assert selection.SEEN[-1] == "cases-11" and not any(s in ("cases-12", "cases-13") for s in selection.SEEN)
    # and switching an item off takes its reading away (a report that switches nothing off reports no gain)
    text = (FIXTURES / "breadth_cpu_limit_nvidia_docker_757.txt").read_text(encoding="utf-8")
    cpu = next(i for i in selection.ITEMS if i.name == "told-word-cpu-limit")
    gdb = next(i for i in selection.ITEMS if i.patches)
    dump = (FIXTURES / "gdb_bt_no_hash_two_lock_waits.txt").read_text(encoding="utf-8")
    with selection.switched_off((cpu, gdb)):
        # what is left may be a phrase the seen deadlock cases share (the fifteenth pass's mined rows, counted where
        # nothing else is read, and the word model's): the gdb reader's evidence is what must be gone
        lock = [e.observation for h in diagnose_text(dump).diagnosis.hypotheses if h.id == "deadlock" for e in h.evidence]
        assert "cpu-starved" not in _causes(text) and not [o for o in lock if not o.startswith(("told-phrase-",
                                                                                               "told-words-"))]
    assert _causes(text)[:1] == ["cpu-starved"] and _causes(dump)[:1] == ["deadlock"]
    for item in selection.ITEMS:
        assert item.rows or item.patches, item.name
        assert all(r in live for r in item.rows), item.name
        assert all(hasattr(m, a) for m, a in item.patches), item.name
