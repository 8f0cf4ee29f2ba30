from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from caretz.messages import ToolCall, ToolSpec
from caretz.tools.arguments import validate_arguments
from caretz.tools.base import ToolArgumentError, ToolContext, ToolResult
from caretz.tools.policy import CancelToolCall, Proceed
from caretz.tools.registry import ToolCrash, ToolRegistry, default_tools


class ScriptedTool:
    """A tool whose run does whatever the test hands it."""

    def __init__(self, name: str, behaviour):
        self.spec = ToolSpec(
            name=name,
            description="test tool",
            parameters={
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "count": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "flag": {"type": "boolean"},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
        )
        self.behaviour = behaviour
        self.calls: list[dict[str, Any]] = []

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(args)
        return self.behaviour(args)


def echo(args: dict[str, Any]) -> ToolResult:
    return ToolResult(ok=True, output=args["text"])


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def call(name: str, arguments: Any = None, error: str | None = None) -> ToolCall:
    return ToolCall(id="call-1", name=name, arguments=arguments or {}, arguments_error=error)


DEFAULT_TOOL_NAMES = [
    "bash",
    "read",
    "write",
    "edit",
    "multi_edit",
    "glob",
    "grep",
    "todo",
    "job_output",
    "job_stop",
]


def test_default_tools_and_their_specs():
    registry = ToolRegistry(default_tools())
    assert registry.names() == DEFAULT_TOOL_NAMES
    for spec in registry.specs():
        assert spec.description
        assert spec.parameters["type"] == "object"
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
    assert registry.get("edit").spec.name == "edit"
    assert registry.get("task") is None


def test_adding_a_second_tool_with_the_same_name_is_refused():
    registry = ToolRegistry([ScriptedTool("t", echo)])
    with pytest.raises(ValueError, match="'t' is already registered"):
        registry.add(ScriptedTool("t", echo))


def test_unknown_tool_fails_listing_available_names(ctx):
    registry = ToolRegistry([ScriptedTool("alpha", echo), ScriptedTool("beta", echo)])
    result = registry.run(call("gamma", {"text": "x"}), ctx)
    assert not result.ok
    assert result.output == "Unknown tool 'gamma'. Available tools: alpha, beta."


def test_invalid_json_arguments_fail_showing_the_error(ctx):
    from caretz.inbound import tool_arguments as parse_arguments

    tool = ScriptedTool("t", echo)
    _, error = parse_arguments('{"a": 1 "b": 2}')  # the error a provider attaches to the call
    result = ToolRegistry([tool]).run(call("t", error=error), ctx)
    assert not result.ok
    assert result.output.count("not valid JSON") == 1
    assert "Expecting ',' delimiter at char 8" in result.output
    assert '{"a": 1 "b": 2}' in result.output
    assert tool.calls == []


def test_a_json_error_that_ends_in_at_is_not_doubled():
    from caretz.inbound import tool_arguments as parse_arguments

    _, error = parse_arguments('{"command": "ls')

    assert error is not None and "at at" not in error
    assert "Unterminated string starting at char 12" in error


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required argument 'text'"),
        ({"text": 5}, "argument 'text' must be a string, got an integer"),
        ({"text": "x", "count": "3"}, "argument 'count' must be an integer, got a string ('3')"),
        ({"text": "x", "count": True}, "argument 'count' must be an integer, got a boolean"),
        ({"text": "x", "count": 1.5}, "argument 'count' must be an integer, got a number"),
        ({"text": "x", "ratio": "fast"}, "argument 'ratio' must be a number"),
        ({"text": "x", "flag": "yes"}, "argument 'flag' must be true or false"),
        ({"text": "x", "colour": "red"}, "unknown argument 'colour'"),
    ],
)
def test_bad_arguments_become_failed_results_naming_the_argument(ctx, arguments, message):
    tool = ScriptedTool("t", echo)
    result = ToolRegistry([tool]).run(call("t", arguments), ctx)
    assert not result.ok
    assert result.output.startswith("Invalid arguments for t: ")
    assert message in result.output
    assert tool.calls == []


def test_valid_arguments_reach_the_tool_and_null_means_absent(ctx):
    tool = ScriptedTool("t", echo)
    arguments = {"text": "hi", "count": 2, "ratio": 3, "flag": False, "colour": None}
    result = ToolRegistry([tool]).run(call("t", arguments), ctx)
    assert result.ok
    assert result.output == "hi"
    assert tool.calls == [{"text": "hi", "count": 2, "ratio": 3, "flag": False}]


def test_tool_argument_error_becomes_a_failed_result(ctx):
    def refuse(args):
        raise ToolArgumentError("count must be 1 or more")

    result = ToolRegistry([ScriptedTool("t", refuse)]).run(call("t", {"text": "x"}), ctx)
    assert not result.ok
    assert result.output == "Invalid arguments for t: count must be 1 or more"


def test_a_crash_inside_a_tool_is_a_tool_crash(ctx):
    def crash(args):
        return {}["boom"]

    with pytest.raises(ToolCrash) as caught:
        ToolRegistry([ScriptedTool("t", crash)]).run(call("t", {"text": "x"}), ctx)
    assert caught.value.tool_name == "t"
    assert isinstance(caught.value.error, KeyError)
    assert caught.value.__cause__ is caught.value.error
    assert str(caught.value) == "tool 't' crashed: KeyError: 'boom'"


def test_duration_is_filled_in_when_the_tool_leaves_it_zero(ctx):
    def slow(args):
        time.sleep(0.02)
        return ToolResult(ok=True, output="done")

    result = ToolRegistry([ScriptedTool("t", slow)]).run(call("t", {"text": "x"}), ctx)
    assert result.duration_s >= 0.02


def test_real_tools_through_the_registry(ctx, tmp_path):
    registry = ToolRegistry(default_tools())
    written = registry.run(call("write", {"path": "pkg/m.py", "content": "v = 1\n"}), ctx)
    assert written.files_changed == ["pkg/m.py"]
    ran = registry.run(call("bash", {"command": "cat pkg/m.py"}), ctx)
    assert ran.ok and ran.output == "v = 1"
    bad = registry.run(call("read", {"path": "pkg/m.py", "offset": 0}), ctx)
    assert not bad.ok and "offset must be 1 or more" in bad.output


def test_validate_arguments_accepts_type_lists():
    schema = {"type": "object", "properties": {"v": {"type": ["string", "integer"]}}}
    assert validate_arguments(schema, {"v": 3}) == []
    assert validate_arguments(schema, {"v": "x"}) == []
    assert validate_arguments(schema, {"v": 1.5}) == [
        "argument 'v' must be a string or an integer, got a number"
    ]


# ---------------------------------------------------------------- before-call and after-call


class Recorded:
    """Before- and after-call hooks that record what they saw, in order."""

    def __init__(self, refuse: str | None = None, name: str = "check"):
        self.refuse = refuse
        self.name = name
        self.seen: list[tuple[str, str, Any]] = []

    def before(self, call: ToolCall, ctx: ToolContext) -> None:
        self.seen.append((self.name, call.name, ctx.workspace))
        if self.refuse is not None:
            raise CancelToolCall(self.refuse)

    def after(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> None:
        self.seen.append(("after", call.name, result.output))


def test_a_before_call_check_refuses_with_a_failed_result_the_model_reads(ctx):
    tool = ScriptedTool("t", echo)
    check = Recorded(refuse="Not allowed here: ask the user first.")
    after = Recorded()
    registry = ToolRegistry([tool], before_call=[check.before], after_call=[after.after])

    result = registry.run(call("t", {"text": "x"}), ctx)

    assert not result.ok and result.output == "Not allowed here: ask the user first."
    assert result.duration_s == 0.0
    assert tool.calls == []
    assert check.seen == [("check", "t", ctx.workspace)]
    assert after.seen == []  # a refused call did not run


def test_checks_run_in_order_registry_first_and_after_call_sees_the_result(ctx):
    tool = ScriptedTool("t", echo)
    order: list[tuple[str, str, Any]] = []
    first, second, per_run = Recorded(name="first"), Recorded(name="second"), Recorded(name="run")
    first.seen = second.seen = per_run.seen = order
    registry = ToolRegistry(
        [tool], before_call=[first.before, second.before], after_call=[first.after]
    )

    result = registry.run(call("t", {"text": "hello"}), ctx, before_call=[per_run.before])

    assert result.ok and tool.calls == [{"text": "hello"}]
    assert [entry[0] for entry in order] == ["first", "second", "run", "after"]
    assert order[-1] == ("after", "t", "hello")


def test_a_per_run_check_runs_only_when_the_registry_checks_allow_the_call(ctx):
    per_run = Recorded(refuse="never reached")
    registry = ToolRegistry([ScriptedTool("t", echo)], before_call=[Recorded("policy").before])

    result = registry.run(call("t", {"text": "x"}), ctx, before_call=[per_run.before])

    assert result.output == "policy" and per_run.seen == []


def test_a_fresh_registry_keeps_the_checks_and_the_tools_added_besides_the_defaults(ctx):
    check = Recorded(refuse="refused")
    registry = ToolRegistry([ScriptedTool("t", echo)], before_call=[check.before])

    fresh = registry.fresh()

    assert fresh.names() == [*DEFAULT_TOOL_NAMES, "t"]  # "t" stands for an MCP server's tool
    assert fresh.run(call("t", {"text": "hi"}), ctx).output == "refused"
    assert fresh.run(call("bash", {"command": "touch x"}), ctx).output == "refused"
    assert not (ctx.workspace / "x").exists()


# ---------------------------------------------------------------- replacing a call, granting one


class ContextRecorder(ScriptedTool):
    """A tool that records the context each call reached it with."""

    def __init__(self, name: str):
        super().__init__(name, echo)
        self.contexts: list[ToolContext] = []

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.contexts.append(ctx)
        return super().run(args, ctx)


def test_a_check_may_put_another_call_in_place_of_the_one_made(ctx):
    tool = ContextRecorder("t")

    def rewrite(call: ToolCall, ctx: ToolContext) -> Proceed:
        return Proceed(
            call=ToolCall(
                id=call.id, name=call.name, arguments={"text": call.arguments["text"].upper()}
            )
        )

    registry = ToolRegistry([tool], before_call=[rewrite])

    assert registry.run(call("t", {"text": "quiet"}), ctx).output == "QUIET"
    assert tool.calls == [{"text": "QUIET"}]


def test_a_replacement_call_is_checked_against_its_tool_like_any_other(ctx):
    tool = ContextRecorder("t")

    def rewrite(call: ToolCall, ctx: ToolContext) -> Proceed:
        return Proceed(call=ToolCall(id=call.id, name=call.name, arguments={"text": 5}))

    result = ToolRegistry([tool], before_call=[rewrite]).run(call("t", {"text": "x"}), ctx)

    assert not result.ok and "argument 'text' must be a string" in result.output
    assert tool.calls == []


def test_a_grant_reaches_the_tool_on_a_copy_of_the_context_for_that_call_only(ctx):
    tool = ContextRecorder("t")

    def grant(call: ToolCall, ctx: ToolContext) -> Proceed | None:
        return Proceed(escalated=True) if call.arguments["text"] == "out" else None

    registry = ToolRegistry([tool], before_call=[grant])
    registry.run(call("t", {"text": "out"}), ctx)
    registry.run(call("t", {"text": "in"}), ctx)

    assert [c.escalated for c in tool.contexts] == [True, False]
    assert tool.contexts[0] is not ctx and ctx.escalated is False
    assert tool.contexts[0].cancel is ctx.cancel  # Ctrl-C still reaches the granted call


def test_a_grant_does_not_carry_over_to_a_call_a_later_check_puts_in_its_place(ctx):
    tool = ContextRecorder("t")

    def grant(call: ToolCall, ctx: ToolContext) -> Proceed:
        return Proceed(escalated=True)

    def rewrite(call: ToolCall, ctx: ToolContext) -> Proceed:
        return Proceed(call=ToolCall(id=call.id, name=call.name, arguments={"text": "other"}))

    ToolRegistry([tool], before_call=[grant, rewrite]).run(call("t", {"text": "x"}), ctx)

    assert tool.calls == [{"text": "other"}] and tool.contexts[0].escalated is False


class Raising:
    """A tool that raises what it is given, as a tool meeting the system would."""

    effect = "read"
    spec = ToolSpec("raising", "raises", {"type": "object", "properties": {}})

    def __init__(self, error: BaseException):
        self.error = error

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise self.error


def test_an_os_error_from_a_call_is_a_failed_result_naming_it(tmp_path: Path):
    import errno

    error = OSError(errno.EINVAL, "Invalid argument", "notes.txt")
    result = ToolRegistry([Raising(error)]).run(call("raising"), ToolContext(workspace=tmp_path))

    assert not result.ok
    assert result.output == "raising failed: Invalid argument [EINVAL] (notes.txt)"


def test_a_nul_byte_in_any_argument_is_a_failed_result_and_other_value_errors_are_bugs(
    tmp_path: Path,
):
    ctx = ToolContext(workspace=tmp_path)
    registry = ToolRegistry(default_tools())

    for name, args in (
        ("bash", {"command": "echo a\0b"}),
        ("read", {"path": "a\0b"}),
        ("write", {"path": "a\0b", "content": "x"}),
        ("edit", {"path": "a\0b", "old_string": "a", "new_string": "b"}),
    ):
        result = registry.run(call(name, args), ctx)
        assert not result.ok and "NUL byte" in result.output, (name, result.output)
    with pytest.raises(ToolCrash):
        ToolRegistry([Raising(ValueError("a bug"))]).run(call("raising"), ctx)


def test_read_only_tools_run_in_parallel_and_the_rest_do_not():
    registry = ToolRegistry(default_tools())
    parallel = [name for name in registry.names() if registry.reads_only(name)]
    assert parallel == ["read", "glob", "grep"]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"text": "lone \ud800"}, "lone surrogate (\\ud800)"),
        ({"text": "x", "\udc80": 1}, "lone surrogate (\\udc80)"),
        ({"text": "x", "ratio": float("nan")}, "a number JSON cannot carry (nan)"),
        ({"text": "x", "ratio": float("inf")}, "a number JSON cannot carry (inf)"),
        ({"text": "x", "flag": {1, 2}}, "a set, which is no JSON value"),
    ],
)
def test_arguments_made_anywhere_are_taken_as_data_from_outside(ctx, arguments, said):
    """A hook's updatedInput, the Python API or an editor make calls without a provider's
    parser: the registry holds their arguments to the same rules."""
    tool = ScriptedTool("t", echo)

    result = ToolRegistry([tool]).run(call("t", arguments), ctx)

    assert not result.ok and said in result.output and tool.calls == []


def test_arguments_nested_past_the_limit_are_refused_before_any_check(ctx):
    tool = ScriptedTool("t", echo)
    nested: dict = {}
    for _ in range(150):
        nested = {"a": nested}

    result = ToolRegistry([tool]).run(call("t", {"text": "x", "n": nested}), ctx)

    assert not result.ok and "nested deeper than 100 levels" in result.output
    assert tool.calls == []


def test_a_result_leaves_the_registry_as_valid_unicode(ctx):
    def surrogates(args):
        return ToolResult(ok=True, output="caf\udce9 \ud800", diff="-\udcff\n+x\n")

    result = ToolRegistry([ScriptedTool("t", surrogates)]).run(call("t", {"text": "x"}), ctx)

    assert result.output == "caf\ufffd \ufffd" and result.diff == "-\ufffd\n+x\n"
