"""The breadth lexicon (parse/prose_breadth.py) and its weak rule rows (diagnose/breadth_rows.py), each row on the
real text of seen cases of two projects (tests/unit/fixtures/paste/breadth_*.txt, excerpts as posted; the case each
comes from is beside it), and the guards that keep a weak row weak: a precise reader still decides.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triage_tui.diagnose.breadth_rows import BREADTH_ROWS, WEAK
from triage_tui.diagnose.corpus_score import read_case
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.vocabulary import VOCABULARY
from triage_tui.parse.prose_breadth import BREADTH
from triage_tui.parse.prose_lexicon import PROSE, scan_told

from tests.unit.paste_diagnosis import by_words_only

FIXTURES = Path(__file__).parent / "fixtures" / "paste"
CORPUS = Path(__file__).resolve().parents[1] / "corpus"

# fixture -> (the breadth row it shows, the cause ranked first); the case each excerpt is from
CASES = {
    # eleventh pass
    "breadth_nccl_tests_117_p2p_hang.txt": ("told-word-nccl-tests", "collective-hang"),  # cases nccl-tests-117
    "breadth_nccl_tests_200_mpirun_hang.txt": ("told-word-nccl-tests", "collective-hang"),  # cases-10 nccl-tests-200
    "breadth_io_caffe_network_drive.txt": ("told-word-io", "io-blocked"),  # cases-9 caffe-6020
    "breadth_io_nfs_ganesha_uninterruptible.txt": ("told-word-io", "io-blocked"),  # cases-6 nfs-ganesha-1327
    "breadth_spin_libiscsi_pollhup.txt": ("told-word-spin", "busy-loop"),  # cases-9 libiscsi-241
    "breadth_spin_aether_busy_spins.txt": ("told-word-spin", "busy-loop"),  # cases-8 aether-1517
    "breadth_compile_tf_first_session.txt": ("told-word-compile", "compiling"),  # cases-9 tensorflow-22043
    "breadth_compile_qwen_first_request.txt": ("told-word-compile", "compiling"),  # cases-8 qwen38-27b-rtx3090-155
    "breadth_stopped_lldb_detach.txt": ("told-word-stopped", "stopped"),  # cases-9 llvm-60408
    "breadth_stopped_sisyphus_sigcont.txt": ("told-word-stopped", "stopped"),  # cases sisyphus-176
    "breadth_gpu_tilelang_syncthreads.txt": ("told-word-gpu-kernel", "gpu-hang"),  # cases-9 tilelang-1026
    "breadth_gpu_stdexec_sanitizer.txt": ("told-word-gpu-kernel", "gpu-hang"),  # cases-9 stdexec-964
    "breadth_event_uvicorn_cleared.txt": ("told-word-event", "event-never-fires"),  # cases-9 uvicorn-748
    "breadth_event_executorlib_result.txt": ("told-word-event", "event-never-fires"),  # cases-3 executorlib-117
    "breadth_fork_openblas_dgemm.txt": ("told-word-fork", "fork-inherited-lock"),  # cases-8 openblas-294
    "breadth_fork_openhands.txt": ("told-word-fork", "fork-inherited-lock"),  # cases-3 openhands-benchmarks-459
    # the second group: causes the precise readers know best, told in words (the precise row fires too, and agrees)
    "breadth_shm_fastai_docker_21.txt": ("told-word-shm", "shm-exhausted"),  # cases fastai-docker-21-shm-size
    "breadth_shm_torchtitan_853.txt": ("told-word-shm", "shm-exhausted"),  # cases-4 torchtitan-853-ci-shm-16mb
    "breadth_lock_file_tfhub_326.txt": ("told-word-lock-file", "stale-file-lock"),  # cases-5 tfhub-326-waiting-for-lock-file
    "breadth_lock_file_clgen_116.txt": ("told-word-lock-file", "stale-file-lock"),  # cases-8 clgen-116-lock-file-blocks-training-afte
    "breadth_gpu_lost_gpu_burn_1.txt": ("told-word-gpu-lost", "gpu-lost"),  # cases-2 gpu-burn-1-xid-79-surprise-down
    "breadth_gpu_lost_owod_81.txt": ("told-word-gpu-lost", "gpu-lost"),  # cases-7 owod-81-nvidia-smi-gpu-is-lost
    "breadth_rendezvous_pytorch_52848.txt": ("told-word-rendezvous", "network-wait"),  # cases-2 pytorch-52848-two-node-init-hang
    "breadth_rendezvous_pytorch_15592.txt": ("told-word-rendezvous", "network-wait"),  # cases-7 pytorch-15592-gloo-connect-127-0-1-1-ref
    "breadth_oom_cbio_232.txt": ("told-word-oom", "oom"),  # cases-4 cbio-232-job-exit-137
    "breadth_oom_ert_7797.txt": ("told-word-oom", "oom"),  # cases-6 ert-7797-oom-killed-realization
    "breadth_mismatch_nccl_296.txt": ("told-word-mismatch", "collective-mismatch"),  # cases nccl-296-mismatched-collective
    "breadth_mismatch_lightning_19106.txt": ("told-word-mismatch", "collective-mismatch"),  # cases-8 lightning-19106-log-dict-different-keys-
    "breadth_died_sglang_2803.txt": ("told-word-died", "crashed-worker"),  # cases sglang-2803-nccl-sigsegv
    "breadth_died_megatron_1880.txt": ("told-word-died", "crashed-worker"),  # cases-3 megatron-1880-exitcode-11-sigsegv
    "breadth_sigkill_colossalai_3172.txt": ("told-word-sigkill", "oom"),  # cases colossalai-3172-exitcode-9
    "breadth_sigkill_cbio_232.txt": ("told-word-sigkill", "oom"),  # cases-4 cbio-232-job-exit-137
    "breadth_late_sglang_39128.txt": ("told-word-late", "wait-for-missing-rank"),  # cases-2 sglang-39128
    "breadth_late_pytorch_87995.txt": ("told-word-late", "wait-for-missing-rank"),  # cases-8 pytorch-87995
    "breadth_compile_vllm_17451.txt": ("told-word-compile", "compiling"),  # cases-3 vllm-17451
    # twelfth pass
    "breadth_cpu_limit_nvidia_docker_757.txt": ("told-word-cpu-limit", "cpu-starved"),  # cases-11 nvidia-docker-757
    "breadth_cpu_limit_311_data_994.txt": ("told-word-cpu-limit", "cpu-starved"),  # cases-8 311-data-994
    "breadth_fork_logging_multiprocessing_logging_26.txt": ("told-word-fork-logging", "fork-inherited-lock"),  # cases-11
    "breadth_fork_logging_prunemate_29.txt": ("told-word-fork-logging", "fork-inherited-lock"),  # cases-7 prunemate-29
    "breadth_load_slow_vllm_2253.txt": ("told-word-load-slow", "still-loading"),  # cases-9 vllm-2253
    "breadth_load_slow_freetoken_237.txt": ("told-word-load-slow", "still-loading"),  # cases-11 freetoken-237
}


def _causes(text: str) -> list[str]:
    return [h.id for h in diagnose_text(text).diagnosis.hypotheses  # what the rows rank, the word model apart
            if h.kind == "cause" and h.score > 0 and h.status != "ruled out" and not by_words_only(h)]


def test_every_fixture_is_named() -> None:
    assert sorted(p.name for p in FIXTURES.glob("breadth_*.txt")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_mechanisms_common_words_rank_its_cause(name: str) -> None:
    oid, cause = CASES[name]
    d = diagnose_text((FIXTURES / name).read_text(encoding="utf-8")).diagnosis
    assert oid in {o.id for o in d.observations}
    top = next(h for h in d.hypotheses if h.kind == "cause" and h.score > 0 and h.status != "ruled out")
    assert top.id == cause
    # honest evidence: the weak row is shown, and says it is words someone wrote
    weak = [e for e in top.evidence if e.observation == oid]
    assert weak and weak[0].weight == WEAK and "told:" in weak[0].text


def test_each_row_is_shown_on_two_projects() -> None:
    # each breadth id fires on fixtures from two different seen cases (a row of one case's phrasing is left out)
    for oid in {s.id for s in BREADTH}:
        assert sum(1 for row_id, _ in CASES.values() if row_id == oid) >= 2, oid


def test_the_rows_are_weak_registered_and_sourced() -> None:
    ids = {s.id for s in BREADTH}
    assert all(s in PROSE for s in BREADTH)  # read by the prose lexicon's machinery
    for oid in ids:
        assert oid in VOCABULARY
        rows = [r for r in BREADTH_ROWS if oid in r.when]
        assert rows, oid
    for r in BREADTH_ROWS:
        assert 0 < r.weight <= WEAK and r.note.startswith("told")
    for s in BREADTH:
        assert "https://" in s.source


@pytest.mark.parametrize("text", [
    "I made a fork of the repo and the forked version of the project works",  # a repository's fork
    "the service stopped working after the upgrade",  # "stopped" that is no stop
    "this prevents the cache from being cleared",  # "prevent" holds "event"
    "the first step is to install it",  # a first run with no figure
])
def test_words_that_are_not_the_mechanism_do_not_fire(text: str) -> None:
    assert not {s.id for s in scan_told(text)} & {s.id for s in BREADTH}


def test_a_precise_reader_still_wins() -> None:
    # a stale lock file told with Triton's autotune (compile words) stays a lock file; py-spy's hot loop (CPU
    # maxed) that leaves its target stopped stays stopped
    for directory, name in (("cases-9", "deepspeed-5205-stuck-acquiring-triton-autotune-lock"),
                            ("cases", "marin-6019-py-spy-blocks-process")):
        path = next((CORPUS / directory).glob(name + "*.md"))
        case = read_case(path)
        assert _causes(case.evidence)[0] == case.cause, name


def test_a_spin_in_a_forked_child_is_no_busy_loop() -> None:
    # OpenBLAS's child "burning 100% of a CPU" after a fork: the spin is the inherited lock's symptom
    assert "busy-loop" not in _causes((FIXTURES / "breadth_fork_openblas_dgemm.txt").read_text(encoding="utf-8"))
