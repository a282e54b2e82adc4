"""Parsers for nvidia-smi output: the CSV queries and the default table as people paste it."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage_tui.model import Unavailable
from triage_tui.parse.nvidia_smi import (
    NvidiaSmiParseError,
    parse_compute_apps_csv,
    parse_nvidia_smi_table,
    parse_query_gpu_csv,
)

DATA = Path(__file__).with_name("data")
MIB = 1024 * 1024


def table(name: str) -> str:
    return (DATA / name).read_text()


# ---------------------------------------------------------------- CSV
def test_query_gpu_csv_reference_incident_row() -> None:
    text = ("0, NVIDIA RTX PRO 6000 Blackwell Server Edition, GPU-abc, 00000000:11:00.0, 97887, 76017, 1335, 0, 0, "
            "34, 67.12, 600.00, 570.86.15\n")
    (d,) = parse_query_gpu_csv(text)
    assert d.index == 0 and d.name == "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    assert d.uuid == "GPU-abc" and d.pci_bus_id == "00000000:11:00.0"
    assert (d.memory_total_bytes, d.memory_used_bytes, d.memory_free_bytes) == (97887 * MIB, 76017 * MIB, 1335 * MIB)
    assert d.utilization_gpu_percent == 0 and d.temperature_c == 34
    assert d.power_draw_w == pytest.approx(67.12) and d.power_limit_w == 600.0
    assert isinstance(d.memory_reserved_bytes, Unavailable)


def test_query_gpu_csv_not_supported_and_na_are_unavailable_never_zero() -> None:
    text = "3, Tesla T4, GPU-x, 00000000:3B:00.0, 15360, 0, 15360, [N/A], N/A, 40, [Not Supported], [Not Supported], 470.1\n"
    (d,) = parse_query_gpu_csv(text)
    assert d.index == 3 and d.memory_used_bytes == 0  # a real 0 stays 0
    assert isinstance(d.utilization_gpu_percent, Unavailable) and isinstance(d.utilization_memory_percent, Unavailable)
    assert d.power_draw_w == Unavailable("not supported", "this board or driver does not report it")


def test_query_gpu_csv_gpu_lost_row() -> None:
    text = "1, [GPU is lost], [GPU is lost], 00000000:3B:00.0, [GPU is lost], [GPU is lost], [GPU is lost], " \
           "[GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], 535.1\n"
    (d,) = parse_query_gpu_csv(text)
    assert d.lost and d.error is not None and isinstance(d.memory_used_bytes, Unavailable)


def test_query_gpu_csv_name_with_a_comma() -> None:
    text = "0, Weird, Inc. GPU, GPU-a, 0000:01:00.0, 100, 50, 50, 1, 2, 30, 10.0, 20.0, 550.1\n"
    (d,) = parse_query_gpu_csv(text)
    assert d.name == "Weird, Inc. GPU" and d.uuid == "GPU-a" and d.memory_used_bytes == 50 * MIB


@pytest.mark.parametrize("text", [
    "Failed to initialize NVML: Driver/library version mismatch\n",
    "0, A100, GPU-a\n",
    "zero, A100, GPU-a, 0000:01:00.0, 100, 50, 50, 1, 2, 30, 10.0, 20.0, 550.1\n",
])
def test_query_gpu_csv_malformed_raises_one_clear_error(text: str) -> None:
    with pytest.raises(NvidiaSmiParseError, match="query-gpu line 1"):
        parse_query_gpu_csv(text)


def test_query_gpu_csv_unreadable_value_is_unavailable() -> None:
    text = "0, A100, GPU-a, 0000:01:00.0, lots, 50, 50, 1, 2, 30, 10.0, 20.0, 550.1\n"
    (d,) = parse_query_gpu_csv(text)
    assert d.memory_total_bytes == Unavailable("unreadable value 'lots'")


def test_compute_apps_csv() -> None:
    pairs = parse_compute_apps_csv("GPU-a, 46440, 76008\nGPU-b, 46441, [N/A]\n\n")
    assert [(u, p.pid, p.used_bytes) for u, p in pairs][0] == ("GPU-a", 46440, 76008 * MIB)
    assert pairs[1][0] == "GPU-b" and isinstance(pairs[1][1].used_bytes, Unavailable)
    assert parse_compute_apps_csv("") == ()


def test_compute_apps_csv_malformed() -> None:
    with pytest.raises(NvidiaSmiParseError, match="PID is not a number"):
        parse_compute_apps_csv("GPU-a, python, 100\n")
    with pytest.raises(NvidiaSmiParseError, match="expected 3 fields"):
        parse_compute_apps_csv("No devices were found\n")


# ---------------------------------------------------------------- table
def test_table_570_layout_reference_incident() -> None:
    report = parse_nvidia_smi_table(table("smi_table_570.txt"))
    assert report.error is None and report.driver_version == "570.86.15" and report.cuda_driver_version == "12.8"
    d0, d1 = report.devices
    assert d0.name == "NVIDIA RTX PRO 6000 Blac..." and d0.pci_bus_id == "00000000:11:00.0"
    assert d0.memory_used_bytes == 76017 * MIB and d0.memory_total_bytes == 97887 * MIB
    assert d0.utilization_gpu_percent == 0 and d0.temperature_c == 34
    assert d0.power_draw_w == 67.0 and d0.power_limit_w == 600.0
    assert isinstance(d1.power_draw_w, Unavailable) and isinstance(d1.power_limit_w, Unavailable)
    assert [(p.pid, p.name, p.used_bytes) for p in d0.processes] == [(46440, "sglang::scheduler_TP0", 76008 * MIB)]
    assert [(p.pid, p.kind) for p in d1.processes] == [(46441, "compute"), (2210, "graphics")]


def test_table_525_layout_with_na_fields() -> None:
    report = parse_nvidia_smi_table(table("smi_table_525.txt"))
    assert report.driver_version == "525.85.12" and len(report.devices) == 2
    d0, d1 = report.devices
    assert d0.name == "NVIDIA A100-SXM..." and d0.temperature_c == 33 and d0.power_draw_w == 61.0
    assert d0.memory_used_bytes == 76017 * MIB
    assert isinstance(d1.temperature_c, Unavailable) and isinstance(d1.power_draw_w, Unavailable)
    assert isinstance(d1.utilization_gpu_percent, Unavailable)
    assert [p.pid for p in d1.processes] == [46434]


def test_table_450_no_running_processes() -> None:
    report = parse_nvidia_smi_table(table("smi_table_450.txt"))
    (d,) = report.devices
    assert d.name == "Tesla V100-SXM2..." and d.memory_used_bytes == 0 and d.processes == ()


def test_table_418_layout_old_process_columns_and_not_supported_power() -> None:
    report = parse_nvidia_smi_table(table("smi_table_418.txt"))
    (d,) = report.devices
    assert d.power_draw_w == Unavailable("not supported", "this board or driver does not report it")
    assert d.utilization_gpu_percent == 1 and d.temperature_c == 38
    assert [(p.pid, p.kind, p.name, p.used_bytes) for p in d.processes] == [
        (1234, "graphics", "/usr/lib/xorg/Xorg", 310 * MIB), (5678, "compute", "compiz", 198 * MIB)]


def test_table_pasted_without_left_indent_or_trailing_spaces_still_parses() -> None:
    text = "\n".join(line.strip() for line in table("smi_table_570.txt").splitlines())
    assert len(parse_nvidia_smi_table(text).devices) == 2


@pytest.mark.parametrize(("text", "words"), [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n", "nvidia-smi said: NVIDIA-SMI has failed"),
    ("Failed to initialize NVML: Driver/library version mismatch\n", "Driver/library version mismatch"),
    ("No devices were found\n", "No devices were found"),
    ("total        used        free\nMem: 449Gi 33Gi 130Mi\n", "no GPU rows found"),
    ("", "no GPU rows found"),
])
def test_table_without_gpus_says_why(text: str, words: str) -> None:
    report = parse_nvidia_smi_table(text)
    assert report.devices == () and report.error is not None and words in report.error.reason


def test_table_cut_after_a_gpu_first_line() -> None:
    lines = table("smi_table_570.txt").splitlines()
    cut = "\n".join(lines[:9])  # ends with GPU 0's first line
    (d,) = parse_nvidia_smi_table(cut).devices
    assert d.index == 0 and d.error is not None and isinstance(d.memory_used_bytes, Unavailable)


def test_table_garbage_lines_between_rows_are_ignored() -> None:
    text = table("smi_table_525.txt").replace("|===", "| garbage | here |\n|===", 1)
    assert [d.index for d in parse_nvidia_smi_table(text).devices] == [0, 1]
