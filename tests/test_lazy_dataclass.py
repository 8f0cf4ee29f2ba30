"""Lazy dataclasses (caretz/lazy_dataclass.py): exactly what `@dataclass` makes, made on
first use; and in the package, every one of them can be made and none has an eager
dataclass below it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import threading

import pytest

import caretz
from caretz.lazy_dataclass import is_lazy, lazy_dataclass, ready, waiting


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


def every_module():
    for info in pkgutil.walk_packages(caretz.__path__, "caretz."):
        if info.name.endswith(("__main__", "local_runner")):
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
