"""The one place each of these passes through, held by reading the code (as
tests/test_architecture.py holds the import table): new code that goes around it fails.

- An ending signal's handler (SIGHUP, SIGTERM, SIGINT) is installed by agent/signals.py,
  which leaves one inherited as ignored alone; elsewhere only where the code asks
  `is_ignored` first, or in a process of caretz's own that caretz itself signals.
- The git and caretz paths of a writable root are protected (covered, pinned, made
  read-only) only for the roots a command can write: `guarded_roots`, never
  `writable_roots` directly (a root on a read-only mount needs, and takes, no cover).
- Every provider is opened by runtime/models.py's `open_provider`, whose request limits
  (firstByteTimeout, streamIdleTimeout, maxRetries) have no default: the session's
  model, the judge and the evaluator all wait and retry as the profile says.
- Every turn is made in `Agent.run_one_turn`, after its prompt is checked against the
  model's window (`prompt_too_large`).
- The prompt's history file is written only through `PrivateHistory`.
- Every streamed answer of a turn is read in `Turn.on_stream_event`, which hands each
  delta to the loop guard and then to the turn's own text-loop cut (any guard mode), and
  every agent's settings carry `loopGuard.detectors.streamText` to that cut.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import caretz
from tests.source_trees import parsed

PACKAGE = Path(caretz.__file__).parent

# Where a handler for an ending signal may be installed, and why.
SIGNAL_HANDLERS = {
    "agent/signals.py": "the one place: inherited ignores are kept (`is_ignored`)",
    "acp/server.py": "the editor's event loop; it asks `is_ignored` first",
    "batch/runner.py": "a batch's stop on Ctrl-C, SIGTERM, SIGHUP; it asks `is_ignored` first",
    "sandbox/landlock.py": "the launcher: a process of its own, which caretz signals itself",
}
MUST_ASK_IGNORED = ("agent/signals.py", "acp/server.py", "batch/runner.py")


def functions(root: Path) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of the package under `root`, with its module's path from `root`."""
    for path in sorted(root.rglob("*.py")):
        tree = parsed(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield str(path.relative_to(root)), node


def called(node: ast.AST) -> set[str]:
    """The names called inside `node` (`f(…)`, `x.f(…)` both as "f")."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
    return names


def handler_installs(root: Path) -> dict[str, set[str]]:
    """The functions that install a signal handler, by module: {module: {function}}."""
    found: dict[str, set[str]] = {}
    for module, function in functions(root):
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            func = call.func
            plain = func.attr == "signal" and isinstance(func.value, ast.Name)
            plain = plain and func.value.id == "signal"
            if plain or func.attr == "add_signal_handler":
                found.setdefault(module, set()).add(function.name)
    return found


def test_ending_signals_are_handled_where_an_inherited_ignore_is_kept():
    installs = handler_installs(PACKAGE)
    assert set(installs) <= set(SIGNAL_HANDLERS), sorted(set(installs) - set(SIGNAL_HANDLERS))
    for module in MUST_ASK_IGNORED:
        for module_name, function in functions(PACKAGE):
            if module_name == module and function.name in installs.get(module, ()):
                assert "is_ignored" in called(function), f"{module}:{function.name}"


def test_the_signal_check_sees_a_handler_of_its_own(tmp_path):
    (tmp_path / "stray.py").write_text(
        "import signal\nimport asyncio\n\n"
        "def hang_up(loop):\n    loop.add_signal_handler(signal.SIGHUP, print)\n\n"
        "def term():\n    signal.signal(signal.SIGTERM, print)\n"
    )
    assert handler_installs(tmp_path) == {"stray.py": {"hang_up", "term"}}


def test_only_the_roots_a_command_can_write_are_covered():
    """A cover is a mount point bubblewrap creates on the host: never on a read-only root."""
    protecting = [
        (module, function)
        for module, function in functions(PACKAGE)
        if "root_protection" in called(function)
    ]
    assert protecting, "root_protection is no longer called: has it moved?"
    for module, function in protecting:
        names = called(function) | {
            node.attr for node in ast.walk(function) if isinstance(node, ast.Attribute)
        }
        where = f"{module}:{function.name}"
        assert "guarded_roots" in names, f"{where} protects roots not from guarded_roots"
        assert "writable_roots" not in names, f"{where} reads writable_roots"


def test_every_provider_is_opened_with_the_profiles_request_limits():
    makers = {
        "create_provider",
        "AnthropicProvider",
        "OpenAIProvider",
        "ResponsesProvider",
    }
    allowed = {
        "runtime/models.py": {"create_provider"},  # open_provider: the one way in
        "providers/registry.py": {"AnthropicProvider", "OpenAIProvider", "ResponsesProvider"},
    }
    outside = sorted(
        f"{module}:{function.name} calls {name}"
        for module, function in functions(PACKAGE)
        for name in called(function) & makers
        if name not in allowed.get(module, set())
    )
    assert outside == []
    opener = next(
        f for m, f in functions(PACKAGE) if m == "runtime/models.py" and f.name == "open_provider"
    )
    arguments = [argument.arg for argument in opener.args.args]
    assert arguments[:3] == ["model", "env", "limits"]
    assert len(opener.args.defaults) <= len(arguments) - 3  # `limits` has no default


def test_every_turn_is_made_after_its_prompt_is_checked_against_the_window():
    making = [
        (module, function) for module, function in functions(PACKAGE) if "Turn" in called(function)
    ]
    assert [(m, f.name) for m, f in making] == [("agent/agent.py", "run_one_turn")]
    _, run_one_turn = making[0]
    calls = [
        node.func.id
        for node in ast.walk(run_one_turn)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert calls.index("prompt_too_large") < calls.index("Turn")


def test_the_prompt_history_is_written_only_through_private_history():
    users = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "FileHistory" in path.read_text(encoding="utf-8")
    )
    assert users == ["ui/paste_input.py"]


def test_every_streamed_answer_passes_the_guard_and_the_turns_text_loop_cut():
    readers = sorted(
        (module, function.name)
        for module, function in functions(PACKAGE)
        if not module.startswith(("providers/", "api/"))  # api.events.TextDelta: its own
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and node.id == "TextDelta"
    )
    assert readers == [("agent/turn.py", "on_stream_event")]
    reader = next(f for m, f in functions(PACKAGE) if (m, f.name) == readers[0])
    branch = next(node for node in ast.walk(reader) if isinstance(node, ast.If))
    checks = [
        (node.func.value.attr, node.func.attr)
        for node in ast.walk(branch)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Attribute)
    ]
    assert ("text_loop", "check") in checks
    makers = [
        (module, function)
        for module, function in functions(PACKAGE)
        if "AgentConfig" in called(function)
    ]
    assert [(m, f.name) for m, f in makers] == [("runtime/wiring.py", "agent_config")]
    keywords = {
        keyword.arg
        for node in ast.walk(makers[0][1])
        if isinstance(node, ast.Call)
        for keyword in node.keywords
    }
    assert "text_loop" in keywords
