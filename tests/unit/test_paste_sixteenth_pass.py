"""The sixteenth pass (issue 15), written from the seen sets (tests/corpus/cases .. cases-15): a GPU driver's watchdog
that timed out a job the GPU never finished, in the formats two drivers print it (amdgpu's amdgpu_job_timedout ring
timeout, the CUDA runtime's launch timeout), read as a hung GPU (bench/paste_selection_16.py reports it per set, and
leave-one-set-out). On the seen cases' real lines and on the negatives that must not fire.
"""

from __future__ import annotations

from pathlib import Path

from bench_script import load_bench_script

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.rules import ROWS
from triage_tui.diagnose.vocabulary import VOCABULARY
from triage_tui.parse.signal_lexicon import scan_line

from tests.unit.paste_diagnosis import ranked

ROOT = Path(__file__).resolve().parents[2]


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def _ids(line: str) -> set[str]:
    return {s.id for s in scan_line(line)}


# https://github.com/ROCm/legacy-rocm-build/issues/1724 (cases-15): a Navi 21's gfx ring timed out, the driver reset it
AMDGPU_GFX = """\
Apr 12 00:54:42 hostname kernel: [drm:amdgpu_dm_atomic_commit_tail [amdgpu]] *ERROR* Waiting for fences timed out!
Apr 12 00:54:42 hostname kernel: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=159760, emitted seq=159762
Apr 12 00:54:42 hostname kernel: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* Process information: process gnome-shell pid 2594 thread gnome-shel:cs0 pid 2616
Apr 12 00:54:42 hostname kernel: amdgpu 0000:2f:00.0: amdgpu: GPU reset begin!
"""
# https://github.com/ROCm/rocDecode/issues/429 (cases-15): an MI300's video decode ring, in dmesg without a timestamp
AMDGPU_VCN = """\
amdgpu 0000:65:00.0: amdgpu: ring vcn_unified_1 timeout, signaled seq=2, emitted seq=6
amdgpu 0000:65:00.0: amdgpu: Process information: process videodecodebatc pid 3795685 thread videodecod:cs0 pid 3795692
amdgpu 0000:65:00.0: amdgpu: GPU reset begin!
"""
# https://github.com/pytorch/pytorch/issues/10853 (cases-14): cudaErrorLaunchTimeout (6) in PyTorch's old THC check
CUDA_LAUNCH = """\
THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1532582123400/work/aten/src/THC/generic/THCTensorCopy.cpp line=21 error=6 : the launch timed out and was terminated
Traceback (most recent call last):
  File "main.py", line 30, in train
    data, target = data.to(device), target.to(device)
RuntimeError: cuda runtime error (6) : the launch timed out and was terminated at /opt/conda/conda-bld/pytorch_1532582123400/work/aten/src/THC/generic/THCTensorCopy.cpp:21
"""


def test_each_drivers_job_timeout_is_read_from_its_own_line() -> None:
    assert "log-gpu-job-timeout" in _ids(AMDGPU_GFX.splitlines()[1])
    assert "log-gpu-job-timeout" in _ids(AMDGPU_VCN.splitlines()[0])
    assert "log-gpu-job-timeout" in _ids(CUDA_LAUNCH.splitlines()[0])
    assert "log-gpu-job-timeout" in _ids("CUDA error: cudaErrorLaunchTimeout")


def test_a_pasted_job_timeout_ranks_a_hung_gpu_first_not_a_lost_one() -> None:
    for text in (AMDGPU_GFX, AMDGPU_VCN, CUDA_LAUNCH):
        causes = _causes(text)
        assert causes[:1] == ["gpu-hang"], (text[:60], causes)
    # with an Xid told beside it, as the PyTorch thread did, the watchdog's job timeout still says hung, not lost
    assert _causes(CUDA_LAUNCH + "At the same time, I get a Xid in dmesg:\n")[:1] == ["gpu-hang"]


def test_lines_that_are_no_job_timeout_do_not_fire() -> None:
    for line in ("the ring buffer timed out waiting for data",
                 "amdgpu 0000:2f:00.0: amdgpu: GPU reset begin!",  # a reset alone says nothing of why
                 "amdgpu: ring gfx test passed",
                 "[drm] ring gfx_0.0.0 uses VM inv eng 0 on hub 0",
                 "the request timed out and the client retried",
                 "NCCL watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout"):
        assert "log-gpu-job-timeout" not in _ids(line), line


def test_the_new_id_is_registered_and_read_by_a_rule_row() -> None:
    used = {term.lstrip("!").strip() for r in ROWS for term in r.when.replace("|", "&").split("&")}
    assert "log-gpu-job-timeout" in VOCABULARY and "log-gpu-job-timeout" in used


def test_the_selection_report_reads_only_the_seen_sets_and_switches_its_items_off() -> None:
    selection = load_bench_script("paste_selection_16")
    assert selection.SEEN[-1] == "cases-15" and not any(s in ("cases-16", "cases-17") for s in selection.SEEN)
    live = {(r.hypothesis, r.when) for r in ROWS}
    assert all(r in live for item in selection.ITEMS for r in item.rows)
    line = AMDGPU_GFX.splitlines()[1]
    for items in (selection.ITEMS, selection.BY_WORDING):  # all of the pass off: neither wording is read
        with selection.switched_off(items):
            assert "log-gpu-job-timeout" not in _ids(line) and "log-gpu-job-timeout" not in _ids(CUDA_LAUNCH.splitlines()[0])
    amd, cuda = selection.BY_WORDING
    with selection.switched_off((amd,)):
        assert "log-gpu-job-timeout" not in _ids(line) and "log-gpu-job-timeout" in _ids(CUDA_LAUNCH.splitlines()[0])
    with selection.switched_off((cuda,)):
        assert "log-gpu-job-timeout" in _ids(line) and "log-gpu-job-timeout" not in _ids(CUDA_LAUNCH.splitlines()[0])
    assert "log-gpu-job-timeout" in _ids(line)


def test_progress_stopped_at_a_percentage_is_the_symptom_told_and_ranks_nothing() -> None:
    # https://github.com/Linketic/CityGaussian/issues/106 (cases-15), the reporter's spelling: the last seen file that
    # read nothing now has its piece used as the symptom told
    text = ("Program stoped at 34% in last epoch after validate finished when i'm training "
            "citygsv2_mc_aerial_coarse_sh2.yaml . Cpu and cuda don't work! \n")
    result = diagnose_text(text)
    assert any(p.used and "told-stall" in p.used_as for p in result.parts)
    assert _causes(text) == []
    for line in ("the download stopped at 99.5 % and never resumed", "training halted at 70%"):
        assert any(p.used for p in diagnose_text(line + "\n").parts), line
    # a time is no progress: no symptom told (the word "stopped" alone is a mined phrase of `stopped` since the
    # seventeenth pass re-mined the lexicon, so the piece may be used as that, never as the symptom)
    assert "told-stall" not in {o.id for o in diagnose_text("the bus stopped at 5 pm\n").diagnosis.observations}
