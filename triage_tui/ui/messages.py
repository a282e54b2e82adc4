"""Messages worker threads post to the UI thread ("attributes down, messages up")."""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message

from ..collect.smaps_files import FileMapping
from ..model.snapshot import Snapshot
from ..model.stacks import StackCapture


class SnapshotReady(Message):
    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class TickFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class StacksReady(Message):
    def __init__(self, capture: StackCapture) -> None:
        super().__init__()
        self.capture = capture


class StacksFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class MappingsReady(Message):
    def __init__(self, pid: int, mappings: Sequence[FileMapping], error: str = "") -> None:
        super().__init__()
        self.pid = pid
        self.mappings = mappings
        self.error = error


class ReportExported(Message):
    def __init__(self, path: str, error: str = "") -> None:
        super().__init__()
        self.path = path
        self.error = error
