"""Messages worker threads post to the UI thread ("attributes down, messages up")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.message import Message

from ..incident import OpeningFailed

if TYPE_CHECKING:  # the model's dataclasses: imported after the app's first frame (#18)
    from ..model.mappings import FileMapping
    from ..model.moment import Moment
    from ..model.stacks import StackCapture


class MomentReady(Message):
    def __init__(self, moment: Moment) -> None:
        super().__init__()
        self.moment = moment


class TickFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class OpenFailed(Message):
    def __init__(self, failure: OpeningFailed) -> None:
        super().__init__()
        self.failure = failure


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
