"""One Observation built from its parts: the id registered in the vocabulary, only plain figures kept."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.diagnosis import Observation
from .vocabulary import register


def obs(oid: str, text: str, source: str, at: float, pids: Sequence[int] = (), **figures: object) -> Observation:
    clean = {k: v for k, v in figures.items() if isinstance(v, (int, float, str))}
    return Observation(id=register(oid), text=text, source=source, at=at, figures=clean, pids=tuple(pids))
