"""Dataclasses made when first used, without generating code.

`@dataclass` writes and compiles a class's `__init__`, `__repr__`, `__eq__` (and a frozen
one's `__setattr__`, `__delattr__`, `__hash__`) as the class is defined: a quarter to half
a millisecond a class, and a run meets some 150 dataclasses on its way to its first model
request, of which it makes about 50. `@lazy_dataclass(...)` takes `dataclass`'s options
and does the work when the class (or a subclass) is first made, or `ready(cls)` is
called; and then, for the options caretz uses (`frozen`, `init`, `kw_only`, `repr`,
`eq`), it lets `dataclasses` read the fields but writes no code: the methods are shared
functions that read the fields' layout, and behave as `@dataclass`'s do (the arguments
and their errors, defaults and factories, `__post_init__`, frozen assignment, equality,
hashing, repr). `dataclasses.fields`, `replace`, `asdict` and `is_dataclass` work on it
as on any dataclass. Other options, or a field `dataclasses` treats apart (`InitVar`),
get `@dataclass` itself. Type checkers read it as `dataclass`.

Rules: every dataclass that inherits from a lazy one is lazy too (tests/
test_lazy_dataclass.py checks the package), and `dataclasses.fields`/`is_dataclass` on
a class not yet made need `ready(cls)` first. A class that writes its own `__init__`, or
that only `@dataclass` can make, is made at once.
"""

from __future__ import annotations

import dataclasses
import reprlib
import threading
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)

_OPTIONS = "__lazy_dataclass__"  # in a class's own __dict__ while it waits
_LAZY = "__lazy__"  # in a class's own __dict__: it was declared lazy
_FROZEN = "__lazy_frozen__"  # in a class's own __dict__: made without code; whether frozen
_WAITING = "__lazy_waiting__"  # on the stand-in __init__ of a class not made yet
_CODELESS = {"frozen", "init", "kw_only", "repr", "eq"}
_lock = threading.RLock()


@overload
def lazy_dataclass(cls: T, /) -> T: ...
@overload
def lazy_dataclass(**options: Any) -> Callable[[T], T]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def lazy_dataclass(cls: Any = None, /, **options: Any) -> Any:
    """`@dataclass(**options)`, done when the class is first made (see the module)."""

    def wait(cls: T) -> T:
        setattr(cls, _LAZY, True)
        if "__init__" in cls.__dict__ or not _can_be_codeless(cls, options):
            ready(cls)  # the lazy classes below it first (it does not wait itself)
            return _make(cls, options)  # its own __init__, or options only dataclass does

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            ready(cls)
            cls.__init__(self, *args, **kwargs)  # type: ignore[misc]  # now the dataclass's own

        setattr(__init__, _WAITING, True)
        setattr(cls, _OPTIONS, options)
        cls.__init__ = __init__  # type: ignore[misc]  # a stand-in until the class is made
        return cls

    return wait if cls is None else wait(cls)


def ready(cls: T) -> T:
    """Make `cls` (and the lazy dataclasses it inherits from, first) a dataclass now.

    The waiting `__init__` stays until the class is whole, so a thread making one meanwhile
    waits for this lock instead of meeting a class half made."""
    with _lock:
        for each in reversed(cls.__mro__):
            options = each.__dict__.get(_OPTIONS)
            if options is None:
                continue
            _make(each, options)
            delattr(each, _OPTIONS)
            if _is_waiting(each.__dict__.get("__init__")):
                del each.__init__  # type: ignore[misc]  # made with init=False: the one it inherits
    return cls


def _is_waiting(method: object) -> bool:
    return getattr(method, _WAITING, False) is True


def waiting(cls: type) -> bool:
    """Whether `cls` is a lazy dataclass not made yet."""
    return _OPTIONS in cls.__dict__


def is_lazy(cls: type) -> bool:
    """Whether `cls` was declared with `@lazy_dataclass` (made since, or not)."""
    return _LAZY in cls.__dict__


# -- making one without code -------------------------------------------------------------


class _Layout(NamedTuple):
    positional: tuple[str, ...]  # init fields taken by position, in order
    keyword: tuple[str, ...]  # the keyword-only ones
    defaults: dict[str, Any]  # an init field's default, by name
    factories: dict[str, Callable[[], Any]]  # an init field's default_factory, by name
    set_after: tuple[tuple[str, Any, Callable[[], Any] | None], ...]  # init=False, defaulted
    shown: tuple[str, ...]  # repr=True
    compared: tuple[str, ...]  # compare=True
    hashed: tuple[str, ...]  # hash=True, or compare=True without a hash setting
    names: frozenset[str]


def _make(cls: T, options: dict[str, Any]) -> T:
    if not _can_be_codeless(cls, options):
        return dataclasses.dataclass(cls, **options)  # type: ignore[return-value]  # cls, made
    frozen, eq = options.get("frozen", False), options.get("eq", True)
    _check_frozen(cls, frozen)
    class_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (
        class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in cls.__dict__)
    )
    if cls.__doc__ is None:  # else dataclass writes one from inspect.signature: slow
        cls.__doc__ = f"{cls.__name__}, a dataclass."
    kw_only = options.get("kw_only", False)
    dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
    layout = _layout(cls)
    _check_order(layout)
    if options.get("repr", True):
        _new(cls, "__repr__", reprlib.recursive_repr()(_representer(layout.shown)))
    if eq:
        _new(cls, "__eq__", _comparer(layout.compared))
    if frozen:
        # The methods dataclass would write, shared: set on the class as it writes its own.
        cls.__setattr__ = _frozen_setter(cls, layout.names)  # type: ignore[assignment]
        cls.__delattr__ = _frozen_deleter(cls, layout.names)  # type: ignore[assignment]
    if eq and not explicit_hash:
        cls.__hash__ = _hasher(layout.hashed) if frozen else None  # type: ignore[assignment]
    setattr(cls, _FROZEN, frozen)
    if options.get("init", True):  # last: a class that can be made is whole
        _new(cls, "__init__", _initializer(cls, layout, frozen))
    return cls


def _can_be_codeless(cls: type, options: dict[str, Any]) -> bool:
    """Whether `cls` takes only options and fields the shared methods do as `dataclass`."""
    if not set(options) <= _CODELESS:
        return False
    if options.get("frozen") and {"__setattr__", "__delattr__"} & set(cls.__dict__):
        return False  # dataclass refuses these; let it say so
    for base in cls.__mro__[1:]:
        if "__dataclass_params__" in base.__dict__ and _FROZEN not in base.__dict__:
            return False  # a dataclass below made with code: its checks, its fields
    annotations = cls.__dict__.get("__annotations__", {})
    return not any("InitVar" in str(hint) for hint in annotations.values())


def _check_frozen(cls: type, frozen: bool) -> None:
    """Refuse what `dataclass` refuses: frozen and not frozen dataclasses mixed."""
    below = [base.__dict__[_FROZEN] for base in cls.__mro__[1:] if _FROZEN in base.__dict__]
    if below and any(below) and not frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
    if below and not any(below) and frozen:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")


def _check_order(layout: _Layout) -> None:
    """Refuse what `dataclass` refuses: a required argument after one with a default."""
    defaulted = False
    for name in layout.positional:
        has_default = name in layout.defaults or name in layout.factories
        if defaulted and not has_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        defaulted = defaulted or has_default


def _layout(cls: type) -> _Layout:
    fields = dataclasses.fields(cls)
    init = [f for f in fields if f.init]
    return _Layout(
        positional=tuple(f.name for f in init if not f.kw_only),
        keyword=tuple(f.name for f in init if f.kw_only),
        defaults={f.name: f.default for f in init if f.default is not dataclasses.MISSING},
        factories={
            f.name: f.default_factory for f in init if f.default_factory is not dataclasses.MISSING
        },
        set_after=tuple(
            (
                f.name,
                f.default,
                None if f.default_factory is dataclasses.MISSING else f.default_factory,
            )
            for f in fields
            if not f.init
            and (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
        ),  # fmt: skip
        shown=tuple(f.name for f in fields if f.repr),
        compared=tuple(f.name for f in fields if f.compare),
        hashed=tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)),
        names=frozenset(f.name for f in fields),
    )


def _new(cls: type, name: str, method: Callable[..., Any]) -> None:
    """Set `method` unless the class defines `name` itself (as dataclass does)."""
    if name in cls.__dict__ and not _is_waiting(cls.__dict__[name]):
        return
    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)


def _initializer(cls: type, layout: _Layout, frozen: bool) -> Callable[..., None]:
    assign = object.__setattr__ if frozen else setattr
    takes = (*layout.positional, *layout.keyword)
    post_init = hasattr(cls, "__post_init__")
    name = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(layout.positional):
            given = len(args) + 1
            raise TypeError(
                f"{name}.__init__() takes {len(layout.positional) + 1} positional arguments "
                f"but {given} were given"
            )
        values = dict(zip(layout.positional, args, strict=False))
        for key, value in kwargs.items():
            if key in values:
                raise TypeError(f"{name}.__init__() got multiple values for argument {key!r}")
            if key not in takes:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument {key!r}")
            values[key] = value
        missing = [key for key in takes if key not in values and key not in layout.defaults
                   and key not in layout.factories]  # fmt: skip
        if missing:
            listed = ", ".join(repr(key) for key in missing)
            raise TypeError(f"{name}.__init__() missing required argument(s): {listed}")
        for key in takes:
            if key in values:
                assign(self, key, values[key])
            elif key in layout.factories:
                assign(self, key, layout.factories[key]())
            else:
                assign(self, key, layout.defaults[key])
        for key, default, factory in layout.set_after:
            assign(self, key, factory() if factory is not None else default)
        if post_init:
            self.__post_init__()

    return __init__


def _representer(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _comparer(names: tuple[str, ...]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    return __eq__


def _hasher(names: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in names))

    return __hash__


def _frozen_setter(cls: type, names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]  # cls is a class

    return __setattr__


def _frozen_deleter(cls: type, names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]  # cls is a class

    return __delattr__
