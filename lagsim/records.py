"""``@record``: lagsim's immutable dataclasses, made at a quarter of the cost (issue 31,
"Start-up": 0.38 ms a class of three fields against 1.6 ms, measured 2026-12-04).

A class decorated with :func:`record` is ``@dataclass(frozen=True)`` for every purpose:
:func:`dataclasses.fields`, :func:`dataclasses.replace`, :func:`dataclasses.asdict`, pickling,
``FrozenInstanceError`` on assigning or deleting a field or adding an attribute, and the same
``__eq__``, ``__hash__`` and ``__repr__`` (the fields with ``compare``, ``hash`` and ``repr`` as
there; a method the class defines itself is kept, as the standard decorator keeps it). What
differs is how it is made. On Python 3.11 the standard decorator compiles the source of six
methods for each class with ``exec``, about 0.17 ms a method with this machine's interpreter:
the 41 dataclasses a warm ``lagsim simulate`` imports took 51 ms of a 270 ms process. Here only
``__init__`` is compiled (its signature names the fields); the comparison, hash, text,
``__setattr__`` and ``__delattr__`` are functions shared by every record, which read each
class's fields through tuples of names made once (:func:`operator.attrgetter`, as fast as
compiled field access). The shared ``__setattr__`` lets ``__init__`` set each field once, then
refuses as the frozen one does (``__post_init__`` sets derived fields with
``object.__setattr__``, as in any frozen dataclass); making an instance costs about 0.2 µs more
a field. ``__dataclass_params__`` therefore says ``eq=False, repr=False, frozen=False``; type
checkers read the class as frozen (PEP 681's ``frozen_default``). Measured with callgrind, a
warm ``lagsim simulate pendulum``: 972 M instructions with the standard decorator, 920 M when
records shared three methods, 858 M now (``python -c 'import numpy, scipy'``: 482 M). Python
3.13 compiles a class's methods in one ``exec``; there this module gains less but does no harm.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: Any) -> Callable[[T], T]:
        """Static typing's marker only (PEP 681; ``typing`` has it from Python 3.11)."""
        return lambda decorated: decorated

T = TypeVar("T")

_COMPARED = "__record_compared__"
_HASHED = "__record_hashed__"
_SHOWN = "__record_shown__"
_FIELDS = "__record_fields__"


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving the tuple of the attributes ``names`` of an object (always a tuple, as
    the standard dataclass's ``(self.a,)``)."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return operator.attrgetter(*names)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        compared = getattr(self.__class__, _COMPARED)
        return compared(self) == compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(getattr(self.__class__, _HASHED)(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = getattr(self.__class__, _SHOWN)
    return (f"{self.__class__.__qualname__}("
            + ", ".join(f"{name}={getattr(self, name)!r}" for name in shown) + ")")


def _setattr(self: Any, name: str, value: Any) -> None:
    kind = type(self)
    if name in getattr(kind, _FIELDS):
        if name in self.__dict__:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    elif _FIELDS in kind.__dict__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    kind = type(self)
    if name in getattr(kind, _FIELDS) or _FIELDS in kind.__dict__:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _explicit_hash(cls: type) -> bool:
    """Whether the class body set ``__hash__`` itself: the standard decorator's rule, where a
    ``__hash__`` of None beside an ``__eq__`` of the body is Python's implicit one, not the
    class's."""
    if "__hash__" not in cls.__dict__:
        return False
    return not (cls.__dict__["__hash__"] is None and "__eq__" in cls.__dict__)


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[T]) -> type[T]:
    """``cls`` as ``@dataclass(frozen=True)`` makes it (this module's docstring)."""
    own_eq = "__eq__" in cls.__dict__
    own_hash = _explicit_hash(cls)
    own_repr = "__repr__" in cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    made = dataclasses.dataclass(eq=False, repr=False)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    setattr(made, _FIELDS, frozenset(f.name for f in fields))
    made.__setattr__ = _setattr  # type: ignore[method-assign]
    made.__delattr__ = _delattr  # type: ignore[method-assign]
    setattr(made, _COMPARED, staticmethod(_getter(tuple(f.name for f in fields if f.compare))))
    setattr(made, _HASHED, staticmethod(_getter(tuple(
        f.name for f in fields if (f.compare if f.hash is None else f.hash)))))
    setattr(made, _SHOWN, tuple(f.name for f in fields if f.repr))
    if not own_eq:
        made.__eq__ = _eq  # type: ignore[method-assign]
    if not own_hash:
        made.__hash__ = _hash  # type: ignore[method-assign]
    if not own_repr:
        made.__repr__ = _repr  # type: ignore[method-assign]
    return made
