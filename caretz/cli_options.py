"""The command's options read as Typer reads them, without building pydantic for each.

Typer (0.2x on) turns every option's value into its Python type through a pydantic
TypeAdapter it builds the first time the option is processed, given or not: for caretz's
thirty options that is pydantic's import and thirty adapters on every run, more than the
rest of `caretz -p` spends before its first request. An option not given, or a string
given to a `str` option (one `list[str]` option included), needs no conversion; any other
value goes to Typer's own adapter, so what a command receives and every message about a
bad value stay Typer's. Typers without that layer (their own click types) are untouched.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import TYPE_CHECKING, Any, cast

import typer
import typer.core

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    from typer import _coercion as typer_coercion
    from typer._click.exceptions import ClickException
else:
    # Only the Typers that build adapters (the ones PlainValues stands in for) have it.
    typer_coercion = lazy_module("typer._coercion")


class Group(typer.core.TyperGroup):
    """The top-level command group: its options read without pydantic where they can be."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        for param in self.get_params(ctx):
            read_plainly(param)
        return super().parse_args(ctx, args)


def read_plainly(param: Any) -> None:
    """Give `param` the plain reading below, where this Typer builds adapters lazily."""
    if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
        param._runtime_param = PlainValues(param)


class PlainValues:
    """Typer's runtime coercion contract (`coerce`) for one option: None and strings as
    they are; anything else through the adapter Typer would have built."""

    def __init__(self, param: Any):
        self._param = param
        self._typer_s: Any = None
        self._many = bool(param.multiple or param.nargs == -1)
        annotation = param.type_descriptor.annotation
        self._string = annotation is str and not self._many
        self._strings = annotation == list[str] and self._many

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if self._many else None  # as Typer: an option not given
        if self._string and isinstance(value, str):
            return value
        strings = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        if self._strings and strings:
            return list(value)
        return self._typer().coerce(value, param=param, ctx=ctx)

    def _typer(self) -> Any:
        if self._typer_s is None:
            self._typer_s = typer_coercion.build_runtime_param(self._param.type_descriptor)
        return self._typer_s


def click_exception() -> type[ClickException]:
    """click's ClickException, from whichever click Typer runs on (newer Typers carry their
    own copy): BadParameter's grandparent, through UsageError."""
    return cast("type[ClickException]", typer.BadParameter.__bases__[0].__bases__[0])


def wants_json(argv: list[str]) -> bool:
    """Whether the command line asks a run for JSON answers (`--output json`, or
    `--input-format stream-json`), read before it is parsed."""
    subcommands = ("sessions", "config", "guard", "mcp", "hooks", "acp", "batch", "worktree")
    if argv and argv[0] in subcommands:
        return False  # a subcommand, not a run: it has no result object
    pairs = list(zip(argv, [*argv[1:], ""], strict=True))
    for flag, value in (("--output", "json"), ("--input-format", "stream-json")):
        if f"{flag}={value}" in argv or (flag, value) in pairs:
            return True
    return False


def stdout_reader_gone(error: BaseException) -> bool:
    """Whether `error` ends a command whose stdout's reader went away (a BrokenPipeError,
    or Click's exit 1 for one); if so, stdout now points at /dev/null, so the interpreter's
    last flush of what is still buffered for the closed pipe neither fails nor prints."""
    cause = error if isinstance(error, BrokenPipeError) else error.__context__
    if not (isinstance(cause, OSError) and cause.errno == errno.EPIPE):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return True


# What `-r` / `--resume` given without an ID reads as: pick one in a terminal.
PICK_SESSION = "@pick"


def with_resume_pick(argv: list[str]) -> list[str]:
    """The command line with PICK_SESSION after a `-r` / `--resume` that has no ID (last,
    or followed by another option): Click would take the next option for the ID."""
    given: list[str] = []
    for index, word in enumerate(argv):
        given.append(word)
        if word in ("-r", "--resume"):
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or following.startswith("-"):
                given.append(PICK_SESSION)
    return given
