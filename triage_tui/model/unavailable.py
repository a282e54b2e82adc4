"""An explicit "could not read this" value: figures are never silently zero."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, TypeVar, Union

if TYPE_CHECKING:  # annotations only (they are strings here): the model stays standard library at run time
    from typing_extensions import TypeIs

T = TypeVar("T")


@dataclass(frozen=True)
class Unavailable:
    """A figure that could not be read, with the reason and how to get it.

    `reason` is short ("permission denied", "no such process", "not supported");
    `hint` says what would make it readable ("run as root or the target's user").
    """

    reason: str
    hint: str = ""

    @property
    def explained(self) -> str:
        """"permission denied (hint: run as root)": the reason and the hint, as every face writes them."""
        return f"{self.reason} (hint: {self.hint})" if self.hint else self.reason

    def __str__(self) -> str:  # the sentence form (model/text_format.py's `unavailable`)
        return f"unavailable: {self.explained}"

    def __bool__(self) -> bool:  # an Unavailable never passes for a real value in `if x:`
        return False


Maybe = Union[T, Unavailable]


def is_known(value: Optional[Maybe[T]]) -> TypeIs[T]:
    """True when `value` is a real figure, not Unavailable or None.

    Typed as a TypeIs: after `if is_known(p.rss_bytes):` the checker knows an int (and after
    `if not is_known(...)`: an Unavailable or None), so figures are used without casts or ignores."""
    return value is not None and not isinstance(value, Unavailable)


def known_or(value: Optional[Maybe[T]], default: T) -> T:
    """The value when known, else `default` (for arithmetic that must go on)."""
    return value if is_known(value) else default


def unavailable_from_error(exc: BaseException, what: str = "") -> Unavailable:
    """Translate an OS-level error into a reason a person can act on."""
    prefix = f"{what}: " if what else ""
    if isinstance(exc, PermissionError):
        return Unavailable(prefix + "permission denied", "run triage as root or as the target's user")
    if isinstance(exc, (FileNotFoundError, ProcessLookupError)):
        return Unavailable(prefix + "no such process or file", "the process may have exited")
    name = type(exc).__name__
    if name == "NoSuchProcess":
        return Unavailable(prefix + "process exited", "")
    if name == "AccessDenied":
        return Unavailable(prefix + "permission denied", "run triage as root or as the target's user")
    if name == "ZombieProcess":
        return Unavailable(prefix + "zombie process", "a zombie has no memory or files left to read")
    return Unavailable(prefix + f"{name}: {exc}".strip(), "")
