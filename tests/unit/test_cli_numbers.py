"""Number options of the command line: what argparse refuses before any face runs."""

from __future__ import annotations

import pytest

from triage_tui.cli import parse


@pytest.mark.parametrize("argv", [
    ["report", "--interval", "nan"],  # these used to be accepted and hung the watch loop for ever
    ["report", "--duration", "nan"],
    ["report", "--duration", "inf"],
    ["stacks", "--timeout", "nan"],
    ["report", "--duration", "0"],
    ["report", "--interval", "-1"],
])
def test_bad_numbers_exit_2_with_one_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(argv)
    assert exited.value.code == 2
    assert "error: argument" in capsys.readouterr().err


def test_ordinary_numbers_pass() -> None:
    _, args = parse(["report", "--interval", "0.5", "--duration", "3"])
    assert (args.interval, args.duration) == (0.5, 3.0)
