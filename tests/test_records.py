"""lagsim.records.record behaves as ``@dataclass(frozen=True)`` (issue 31, "Start-up"): each
property is checked against the standard decorator applied to the same class body."""

from __future__ import annotations

import ast
import copy
import dataclasses
import pickle
from dataclasses import field
from pathlib import Path

import pytest

from lagsim.records import record


def _body() -> dict[str, object]:
    return {"__annotations__": {"a": "int", "b": "tuple[int, ...]", "c": "dict",
                                "d": "list", "e": "float"},
            "b": (), "c": field(default_factory=dict, compare=False),
            "d": field(default_factory=list, repr=False, hash=False),
            "e": field(default=0.5, hash=True, compare=True),
            "__module__": __name__}


def _pair() -> tuple[type, type]:
    ours = record(type("Ours", (), _body()))
    theirs = dataclasses.dataclass(frozen=True)(type("Ours", (), _body()))
    return ours, theirs


@record
class Point:
    x: float
    y: float = 0.0


@record
class Loop:
    """A record that can contain itself (repr must not recurse forever)."""

    items: list


def test_equality_hash_and_text_are_the_standard_decorators() -> None:
    ours, theirs = _pair()
    values = [(1, (2,), {"k": 1}, [], 0.5), (1, (2,), {"other": 2}, [3], 0.5),
              (2, (), {}, [], 0.5), (1, (2,), {}, [], 1.5)]
    for left in values:
        assert repr(ours(*left)) == repr(theirs(*left))
        for right in values:
            assert (ours(*left) == ours(*right)) == (theirs(*left) == theirs(*right))
    # c is not compared, d is not hashed: hashes equal exactly where the standard ones are
    hashed = [(1, (2,), {}, [], 0.5), (1, (2,), {}, [], 0.5)]
    assert hash(ours(*hashed[0])) == hash(theirs(*hashed[1]))
    assert ours(1) != theirs(1)  # another class: not equal, as between two dataclasses
    assert Point(1.0) != (1.0, 0.0) and Point(1.0) == Point(1.0, 0.0)


def test_a_record_is_frozen_and_a_dataclass_in_every_other_way() -> None:
    p = Point(1.0, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.y  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y"]
    assert dataclasses.replace(p, y=5.0) == Point(1.0, 5.0)
    assert dataclasses.asdict(p) == {"x": 1.0, "y": 2.0}
    assert pickle.loads(pickle.dumps(p)) == p
    assert copy.deepcopy(p) == p and hash(copy.copy(p)) == hash(p)
    assert Point.__match_args__ == ("x", "y")
    match p:
        case Point(x, y):
            assert (x, y) == (1.0, 2.0)
    loop = Loop([])
    loop.items.append(loop)
    assert repr(loop) == "Loop(items=[...])"


def test_every_field_is_set_once_by_init_and_never_after() -> None:
    """Frozen as the standard decorator's instance is: ``__init__`` (and ``__post_init__``
    through ``object.__setattr__``, as frozen classes do) sets each field, then any assignment
    or deletion of a field, or a new attribute, raises; a plain subclass may add attributes of
    its own, as it may under the standard decorator."""

    @record
    class Derived:
        a: float
        twice: float = field(init=False)
        cache: dict = field(default_factory=dict, init=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "twice", 2 * self.a)

    d = Derived(1.5)
    assert (d.a, d.twice, d.cache) == (1.5, 3.0, {})
    for name in ("a", "twice", "cache", "new"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(d, name, 0.0)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(d, name)
    assert (d.a, d.twice, d.cache) == (1.5, 3.0, {}) and not hasattr(d, "new")

    class Plain(Derived):
        pass

    p = Plain(2.0)
    p.extra = 1  # type: ignore[attr-defined]
    assert p.extra == 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.a = 3.0  # type: ignore[misc]

    @dataclasses.dataclass(frozen=True)
    class Standard:
        a: float

    class PlainStandard(Standard):
        pass

    q = PlainStandard(2.0)
    q.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="__setattr__"):
        record(type("Own", (), {"__annotations__": {"a": "int"}, "__module__": __name__,
                                "__setattr__": lambda self, n, v: None}))


def test_methods_a_class_defines_are_kept_and_an_implicit_hash_is_replaced() -> None:
    @record
    class Own:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

        def __repr__(self) -> str:
            return "own"

    @dataclasses.dataclass(frozen=True)
    class Standard:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    assert Own(1) == Own(2) and repr(Own(1)) == "own"
    # defining __eq__ makes Python set __hash__ = None; both decorators put a field hash back
    assert hash(Own(1)) == hash(Standard(1)) == hash((1,))

    @record
    class Unhashable:
        a: int
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(TypeError):
        hash(Unhashable(1))


def test_lagsim_declares_its_immutable_dataclasses_with_record() -> None:
    """A frozen ``@dataclass`` of the package is a ``@record`` (one declaration of how lagsim
    makes them), but for those that compare by identity (``eq=False``: no method to share)."""
    root = Path(__file__).parents[1] / "lagsim"
    frozen = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                for deco in node.decorator_list:
                    if isinstance(deco, ast.Call) and any(
                            k.arg == "frozen" and getattr(k.value, "value", False) is True
                            for k in deco.keywords) and "eq" not in {k.arg for k in deco.keywords}:
                        frozen.append(f"{path.relative_to(root)}:{node.name}")
    assert frozen == []
