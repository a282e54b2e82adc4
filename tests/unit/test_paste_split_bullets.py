"""A long Markdown bullet list is prose, found in one walk: its lines start like `curl -v`'s `* ` lines, and each
was once walked to the list's end again (5,000 bullets: 12.5 million line checks, a fuzzed paste 19 s of CPU)."""

from __future__ import annotations

import re

import pytest

from triage_tui.parse import curl_text
from triage_tui.parse.paste_split import split_paste


class _Counted:
    """CURL_LINE with its matches counted (the curl branch's walk checks each line of the run with it)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def match(self, text: str) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.match(text)


def test_a_long_bullet_list_is_one_prose_part_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 3_000
    text = "The server stopped routing:\n" + "\n".join(["* newly submitted completion requests still returned HTTP 200;"] * n)
    counted = _Counted(curl_text.CURL_LINE)
    monkeypatch.setattr(curl_text, "CURL_LINE", counted)
    parts = split_paste(text)
    assert [(p.kind, p.first_line, p.last_line) for p in parts] == [("text", 1, n + 1)]
    assert counted.calls < 4 * n, counted.calls  # walked to the end once per line it was, ~n * n / 2


def test_curl_lines_after_a_bullet_list_are_still_curl() -> None:
    text = "\n".join(["* one thing we saw", "* another thing", "",
                      "*   Trying 127.0.0.1:8000...", "* connect to 127.0.0.1 port 8000 failed: Connection refused",
                      "* Failed to connect to localhost port 8000: Connection refused", "* Closing connection 0"])
    kinds = [(p.kind, p.first_line) for p in split_paste(text)]
    assert kinds == [("text", 1), ("curl", 4)]
