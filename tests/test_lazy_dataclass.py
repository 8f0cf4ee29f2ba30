"""Lazy dataclasses (caretz/lazy_dataclass.py): made on first use, without generated code,
and behaving as `@dataclass`'s do (each check below against a twin made by `@dataclass`);
in the package, every one of them can be made and none has an eager dataclass below it."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
import sys
import threading
from typing import Any

import pytest

import caretz
from caretz.lazy_dataclass import is_lazy, lazy_dataclass, ready, waiting
from tests.sandbox.helpers import wait_for


def test_a_lazy_dataclass_is_made_on_first_use_and_is_then_a_dataclass():
    @lazy_dataclass(frozen=True, kw_only=True)
    class Base:
        name: str = ""
        tags: list[str] = dataclasses.field(default_factory=list)

    @lazy_dataclass(frozen=True, kw_only=True)
    class Child(Base):
        count: int = 0

    assert waiting(Base) and waiting(Child)
    child = Child(name="a", count=2)
    assert not waiting(Base) and not waiting(Child)
    assert child == Child(name="a", count=2) and child != Child(name="b", count=2)
    assert repr(child).endswith("Child(name='a', tags=[], count=2)")
    assert [f.name for f in dataclasses.fields(Child)] == ["name", "tags", "count"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.count = 3  # type: ignore[misc]
    assert dataclasses.replace(child, count=5).count == 5
    with pytest.raises(TypeError):
        Child(2)  # type: ignore[misc]  # keyword-only, as @dataclass makes it


def test_a_plain_subclass_calling_the_base_init_makes_the_base_once():
    @lazy_dataclass
    class Point:
        x: int
        y: int = 0

    class Named(Point):
        def __init__(self, name: str, x: int) -> None:
            super().__init__(x)
            self.name = name

    named = Named("origin", 1)
    assert (named.name, named.x, named.y) == ("origin", 1, 0)
    assert dataclasses.is_dataclass(Point) and not waiting(Point)


def test_threads_making_the_same_class_at_once_make_it_once():
    @lazy_dataclass
    class Slow:
        value: int = 0

    made = []
    threads = [threading.Thread(target=lambda: made.append(Slow(1))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == [Slow(1)] * 8


def test_a_class_being_made_in_one_thread_is_never_met_half_made_in_another():
    """While one thread makes the class (held inside `dataclasses`, which reads a field's
    default from the class), another that makes one waits for it: before, it met the class
    without any `__init__` and failed with "takes no arguments"."""
    reading, go_on = threading.Event(), threading.Event()

    class HeldDefault:  # read as the class is made, from the first maker's thread
        def __get__(self, instance: object, owner: type | None = None) -> int:
            if instance is None and not reading.is_set():
                reading.set()
                go_on.wait(WAIT_S)
            return 0

    @lazy_dataclass(frozen=True)
    class Point:
        x: int = HeldDefault()  # type: ignore[assignment]

    made: list[object] = []

    def make(x: int) -> None:
        try:
            made.append(Point(x))
        except Exception as error:  # what the test is about: recorded, not lost in a thread
            made.append(error)

    first = threading.Thread(target=make, args=(1,))
    first.start()
    assert reading.wait(WAIT_S)
    second = threading.Thread(target=make, args=(2,))
    second.start()
    assert wait_for(lambda: not second.is_alive() or in_function(second, "ready"), WAIT_S)
    go_on.set()
    first.join(WAIT_S)
    second.join(WAIT_S)
    assert sorted(made, key=repr) == [Point(1), Point(2)]


WAIT_S = 60.0  # a hang guard only


def in_function(thread: threading.Thread, name: str) -> bool:
    """Whether `thread` is now inside a call of a function called `name`."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


def twins(options: dict[str, Any]) -> tuple[type, type]:
    """The same class made by `@dataclass(**options)` and by `@lazy_dataclass(**options)`."""

    def body(make: Any) -> type:
        @make(**options)
        class Order:
            item: str
            count: int = 1
            notes: list[str] = dataclasses.field(default_factory=list)
            secret: str = dataclasses.field(default="", repr=False, compare=False)
            seen: int = dataclasses.field(default=0, init=False)

            def __post_init__(self) -> None:
                object.__setattr__(self, "seen", len(self.item))

        return Order

    return body(dataclasses.dataclass), body(lazy_dataclass)


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"kw_only": True}, {"eq": False}])
def test_made_without_code_it_behaves_as_dataclass_s_twin(options):
    eager, lazy = twins(options)
    args, kwargs = ((), {"item": "tea"}) if options.get("kw_only") else (("tea", 2), {})
    a, b = eager(*args, **kwargs), lazy(*args, **kwargs)

    assert repr(a).replace(".eager.", ".") == repr(b).replace(".lazy.", ".")
    assert repr(b).endswith(f"Order(item='tea', count={a.count}, notes=[], seen=3)")
    assert (b.seen, b.notes, b.secret) == (a.seen, a.notes, a.secret) == (3, [], "")
    assert b.notes is not lazy(*args, **kwargs).notes  # a factory per instance
    same = lazy(*args, **kwargs)
    assert (b == same) == (a == eager(*args, **kwargs))
    assert (b == dataclasses.replace(same, secret="x")) == (a == dataclasses.replace(a, secret="x"))
    assert (b == a) is False and b.__eq__(a) is NotImplemented or options.get("eq") is False
    assert (type(b).__hash__ is None) == (type(a).__hash__ is None)
    assert kind(lambda: hash(b)) == kind(lambda: hash(a))  # with eq and frozen: a list's error
    assert dataclasses.asdict(b) == dataclasses.asdict(a)
    assert [f.name for f in dataclasses.fields(lazy)] == [f.name for f in dataclasses.fields(eager)]
    assert lazy.__match_args__ == eager.__match_args__
    assert copy.deepcopy(b) == b if options.get("eq", True) else True
    assert pickle.loads(pickle.dumps(Picklable("a", 1))) == Picklable("a", 1)
    for wrong in ((), ("a", 1, [], "", "extra")):
        with pytest.raises(TypeError):
            eager(*wrong)
        with pytest.raises(TypeError):
            lazy(*wrong)
    for bad in ({"item": "a", "nope": 1}, {"item": "a", "seen": 1}):
        with pytest.raises(TypeError, match="unexpected keyword"):
            lazy(**bad)
    if options.get("frozen"):
        for each in (a, b):
            with pytest.raises(dataclasses.FrozenInstanceError):
                each.count = 5
            with pytest.raises(dataclasses.FrozenInstanceError):
                del each.item
    else:
        b.count = 5
        assert b.count == 5


def kind(call: Any) -> type:
    """The type of what `call()` gives, or of what it raises."""
    try:
        return type(call())
    except Exception as error:  # noqa: BLE001 (compared, not handled)
        return type(error)


@lazy_dataclass(frozen=True)
class Picklable:
    name: str
    size: int = 0


def test_what_dataclass_refuses_is_refused():
    @lazy_dataclass(frozen=True)
    class Frozen:
        x: int = 0

    @lazy_dataclass
    class Thawed(Frozen):
        y: int = 0

    with pytest.raises(TypeError, match="non-frozen dataclass from a frozen one"):
        Thawed()

    @lazy_dataclass
    class Disordered:
        x: int = 0
        y: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="non-default argument 'y' follows default argument"):
        Disordered()


def test_a_frozen_subclass_may_set_attributes_of_its_own_only_through_object():
    @lazy_dataclass(frozen=True)
    class Base:
        x: int = 0

    @lazy_dataclass(frozen=True)
    class Child(Base):
        y: int = 0

    child = Child(1, 2)
    assert (child.x, child.y) == (1, 2) and child == Child(1, 2) and child != Base(1)
    assert hash(child) == hash((1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.z = 3  # type: ignore[attr-defined]


def every_module():
    for info in pkgutil.walk_packages(caretz.__path__, "caretz."):
        if info.name.endswith(("__main__", "local_runner")):
            continue
        if info.name == "caretz.integrations.harbor":  # needs the harbor extra (Python 3.12+)
            continue
        yield importlib.import_module(info.name)


def test_every_lazy_dataclass_in_caretz_can_be_made_and_none_has_an_eager_subclass():
    classes = {
        value
        for module in every_module()
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__.startswith("caretz")
    }
    lazy = {cls for cls in classes if is_lazy(cls)}
    for cls in classes - lazy:
        if dataclasses.is_dataclass(cls):
            below = [base.__qualname__ for base in cls.__mro__[1:] if is_lazy(base)]
            assert below == [], f"{cls.__qualname__}: an eager dataclass below lazy {below}"
    for cls in lazy:
        assert dataclasses.is_dataclass(ready(cls)) and not waiting(cls)
    assert len(lazy) > 50  # the hot path's
