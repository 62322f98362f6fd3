"""`@record` means what `@dataclass(frozen=True, slots=True)` means: each test builds the
same class both ways and checks they behave alike (the IR, its types and the op facts
are records; passes rely on dataclasses.replace / fields and on value equality)."""
from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from pypto.ir.record import record

BODY = {
    "__annotations__": {"x": "int", "y": "int", "tag": "str", "items": "list"},
    "tag": field(default="p", compare=False),
    "items": field(default_factory=list, repr=False),
    "y": 0,
}


def _classes():
    rec = record(type("Point", (), {**BODY}))
    ref = dataclass(frozen=True, slots=True)(type("Point", (), {**BODY}))
    return rec, ref


def test_init_defaults_and_factories_match_dataclass():
    for cls in _classes():
        p = cls(1)
        assert (p.x, p.y, p.tag, p.items) == (1, 0, "p", [])
        assert cls(1).items is not cls(1).items  # a fresh list per instance
        assert cls(1, 2, tag="q").tag == "q"
        assert cls(x=3, y=4) == cls(3, 4)
    with pytest.raises(TypeError):
        _classes()[0]()  # x has no default


def test_equality_hash_and_repr_follow_compare_and_repr_flags():
    rec, ref = _classes()
    for cls in (rec, ref):
        assert cls(1, 2, tag="a") == cls(1, 2, tag="b")  # tag: compare=False
        assert cls(1, 2) != cls(1, 3)
        assert cls(1, 2).__eq__(object()) is NotImplemented
    # hashing a list field fails the same way in both; equal values hash alike without one
    a, b = rec(1, 2, items=()), rec(1, 2, tag="other", items=())
    assert hash(a) == hash(b) == hash((1, 2, ()))
    assert repr(rec(1, 2)) == repr(ref(1, 2)) == "Point(x=1, y=2, tag='p')"


def test_frozen_slotted_and_standard_library_helpers():
    rec, ref = _classes()
    p = rec(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.x
    assert not hasattr(p, "__dict__") and rec.__slots__ == ref.__slots__
    assert dataclasses.is_dataclass(p)
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(ref)]
    q = dataclasses.replace(p, y=7)
    assert (q.x, q.y, type(q)) == (1, 7, rec)
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "tag": "p", "items": []}
    assert rec.__match_args__ == ref.__match_args__ == ("x", "y", "tag", "items")


def test_pickle_and_copy_round_trip():
    rec = record(type("Pt", (), {**BODY}))
    rec.__module__, rec.__qualname__ = __name__, "Pt"  # where pickle looks the class up
    globals()["Pt"] = rec
    try:
        p = rec(1, 2, tag="t", items=(1,))
        for q in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
            assert q == p and q.tag == "t" and q.items == (1,)
    finally:
        del globals()["Pt"]


def test_methods_compile_on_first_use_whichever_comes_first():
    # an instance restored by pickle never ran __init__: its first hash / repr / == must
    # still find the real methods
    rec = record(type("Pt", (), {**BODY}))
    p = rec.__new__(rec)
    p.__setstate__([1, 2, "p", ()])
    assert repr(p) == "Pt(x=1, y=2, tag='p')"
    rec2 = record(type("Pt", (), {**BODY}))
    q = rec2.__new__(rec2)
    q.__setstate__([1, 2, "p", ()])
    assert hash(q) == hash((1, 2, ()))
    assert q == rec2(1, 2, items=())


def test_inheritance_post_init_and_own_methods():
    @record
    class Base:
        a: int
        b: int = 0

        def total(self) -> int:
            return self.a + self.b

    @record
    class Child(Base):
        c: int = 1

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("a must be >= 0")

        def __repr__(self) -> str:
            return "child"

    ch = Child(1, 2, 3)
    assert (ch.a, ch.b, ch.c, ch.total()) == (1, 2, 3, 3)
    assert repr(ch) == "child" and isinstance(ch, Base)
    assert Child(1) != Base(1)  # different classes never compare equal
    with pytest.raises(ValueError, match="a must be >= 0"):
        Child(-1)

    @dataclass(frozen=True)  # a plain dataclass may extend a record
    class Grand(Child):
        d: int = 4

    g = Grand(1, 2, 3, 5)
    assert (g.a, g.d) == (1, 5)


def test_identity_equality_and_definition_errors():
    @record(eq=False, slots=False)
    class Handle:
        name: str

    h = Handle("x")
    assert h != Handle("x") and h == h
    assert hash(h) == object.__hash__(h)
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field xs"):
        record(type("Bad", (), {"__annotations__": {"xs": "list"}, "xs": []}))
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):
        record(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 0}))
