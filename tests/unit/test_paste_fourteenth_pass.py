"""The fourteenth pass (issue 15), written from the seen sets (tests/corpus/cases .. cases-13): files where triage read
nothing, read as evidence where they quote a figure with its unit and subject, or tell a lost GPU through NVIDIA's own
tools (bench/paste_selection_14.py reports each item per set, and leave-one-set-out): GPUs pinned at a percentage
(nvtop's figure), a stuck stage whose length is told after it ("lasted for even 20 hours"), a stall's minutes told in
Chinese, GPUs gone from nvidia-smi's list and NVML's init hanging. Each on the seen cases' real text, and the negatives
that must not fire.
"""

from __future__ import annotations

import pytest

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.prose_figures import figures_in
from triage_tui.parse.prose_lexicon import scan_told

from tests.unit.paste_diagnosis import ranked


def _figures(line: str) -> list[tuple[str, float]]:
    return [(f.kind, f.value) for f in figures_in([(1, line)])]


def _told(line: str) -> set[str]:
    return {s.id for s in scan_told(line)}


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


# Lightning-AI/pytorch-lightning#5865 (cases-7)
LIGHTNING = ('The epoch seems to be random (might stop after first, or after several), but always just after validation '
             'and on the start of the next epoch. No error messages. Both GPUs locked at "100%" but the data being sent '
             'to GPU 0 (RX in nvtop) is 0 MB/s and the temperatures show that the GPUs are not working hard. 2 CPU cores '
             'locked at 100%.')
# deepmodeling/deepmd-kit#5117 (cases-7)
DEEPMD = ('I found that strangely my dpgen run is stucked at the stage of "data stating... (this step may take long '
          'time)", and sometimes lasted for even 20 hours (I don\'t know what will happen after 20 hours as I just killed '
          'the job then), and while it stucked, no outputs were produced, also no errors were reported either.')
# whiteguo233/OpenBiliClaw#253 (cases-10)
BILI_1 = "`CI` 的 `test` job 在全量 `python -m pytest -q` 输出 `[ 69%]`（完成 **6336** 个用例）后卡住 60+ 分钟，无任何后续输出，直到手动取消。"
BILI_2 = "- run `35065823706`（main push `af983aa3`，不含 PR #252 的 consolidator 改动）— 在 69% 停留 66 分钟后被取消。"
# NVIDIA/gpu-operator#643 (cases-13)
GPU_OPERATOR = """\
Hi, my device is `ubuntu1~18.04`, which has 7 Tesla T4 GPUs. It has worked well for over 2 years.
However, in this morning, 2 GPUs disappeared in `nvidia-smi`.
Then I reboot the device, and they reappeared.
But now, only after a few hours, 1 GPU disappears again, then another GPU disappears too.
"""
# NVIDIA/go-nvml#152 (cases-11)
GO_NVML = ("During the use of the device-plugin component, nvml.init() is used to initialize NVML. However, after running "
           "stably for more than ten hours, the init function hangs internally. What could be the issue?\n")


def test_gpus_pinned_at_a_percentage_are_a_busy_gpu_figure_and_the_cpu_cores_are_not_read() -> None:
    # the GPUs' figure is read (nvtop's utilisation); "2 CPU cores locked at 100%" is left unread on purpose: on the
    # one seen case that says it, the cores spin in NCCL's wait and busy-loop would rank first, wrongly
    assert _figures(LIGHTNING) == [("gpu-util", 100.0)]
    assert _figures("the GPUs are locked at 100% utilization") == [("gpu-util", 100.0)]
    piece = next(p for p in diagnose_text(LIGHTNING).parts if p.used)
    assert "gpu-util" in piece.used_as
    assert "busy-loop" not in _causes(LIGHTNING)


def test_a_stuck_stage_whose_length_is_told_after_it_is_a_stuck_figure() -> None:
    assert _figures(DEEPMD) == [("stuck-for", 72000.0)]
    # a length without a stall ("the run lasted 20 hours") is no stuck figure
    assert _figures("training lasted for 20 hours and finished fine") == []


def test_a_stall_told_in_chinese_minutes_is_a_stuck_figure() -> None:
    assert _figures(BILI_1) == [("stuck-for", 3600.0)]
    assert _figures(BILI_2) == [("stuck-for", 3960.0)]
    # minutes that are not a stall ("用时 66 分钟": took 66 minutes) are not read
    assert _figures("整个测试用时 66 分钟，全部通过。") == []


def test_the_files_that_read_nothing_now_have_a_used_piece_that_says_what_it_read() -> None:
    for text, kind in ((DEEPMD, "stuck-for"), (BILI_1 + "\n\n" + BILI_2, "stuck-for"), (LIGHTNING, "gpu-util")):
        used = [p for p in diagnose_text(text).parts if p.used]
        assert used and kind in used[0].used_as
        assert any(o.id.startswith("prose-") for o in diagnose_text(text).diagnosis.observations)


def test_gpus_gone_from_nvidia_smi_and_nvml_init_hanging_are_a_lost_gpu() -> None:
    assert "told-word-gpu-lost" in _told("However, in this morning, 2 GPUs disappeared in `nvidia-smi`.")
    assert "told-word-gpu-lost" in _told(GO_NVML)
    assert _causes(GPU_OPERATOR)[:1] == ["gpu-lost"]
    assert _causes(GO_NVML)[:1] == ["gpu-lost"]


@pytest.mark.parametrize("line", [
    "nvidia-smi shows 8 GPUs, all idle",
    "the process disappeared from nvidia-smi after it was killed",
    "nvml.init() returns quickly, the hang is in the data loader",
    "nvmlInit is called once at start-up",
])
def test_nvidia_smi_and_nvml_said_of_other_things_are_not_a_lost_gpu(line: str) -> None:
    assert "told-word-gpu-lost" not in _told(line)
