"""Where data from outside comes in, and where caretz's own data is written, each one way
(tests/test_architecture.py's style: the code is read, so new code that goes around either
way fails here, whatever it does when run):

- JSON from a model, a server, an MCP server, a page, a hook or a program driving caretz is
  read only by caretz/inbound.py; the few readers of caretz's own files are named here;
- bytes from outside are decoded so that no byte can fail the decoding;
- a provider hands the turn only what its draft made, and its parsers are fed through the
  one seam that turns a malformed event into a StreamFailure;
- only the event log writes events.jsonl, and only two places open one;
- a folder or a file is created under the data dir only by caretz/private_data.py; the
  functions that create files elsewhere (the project's, the system's tmp) are named here;
- a write there that the folder cannot take (full, read-only) is one DataWriteFailed, and
  each front end turns it into one line;
- a number or a port is read as ASCII digits only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import caretz
from tests.source_trees import parsed

PACKAGE = Path(caretz.__file__).parent


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield str(path.relative_to(PACKAGE)), parsed(path)


def calls(tree: ast.AST) -> Iterator[tuple[str, ast.Call]]:
    """Every call in `tree`, with where it is: `Class.method`, `function` ("" at the top)."""

    def walk(node: ast.AST, where: str) -> Iterator[tuple[str, ast.Call]]:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{where}.{child.name}" if where else child.name
            if isinstance(child, ast.Call):
                yield where, child
            yield from walk(child, inner)

    yield from walk(tree, "")


def called(call: ast.Call) -> tuple[str, str]:
    """(what the call is made on, the name called): ("json", "loads"), ("", "open")."""
    function = call.func
    if isinstance(function, ast.Attribute):
        return ast.unparse(function.value), function.attr
    return "", function.id if isinstance(function, ast.Name) else ""


# --- JSON from outside ---------------------------------------------------------------------

# The modules that read JSON themselves: files caretz wrote, or the user's and the
# project's configuration, whose readers name the file and line in a ConfigError.
OWN_JSON = {
    "inbound.py": "the one reader of JSON from outside",
    "approvals.py": "caretz's own approval store",
    "session/events.py": "the session log caretz wrote (and a line it just wrote, repaired)",
    "checkpoints/model.py": "the notes caretz wrote on its own checkpoint commits",
    "sandbox/runtime.py": "bubblewrap's --info-fd report of the namespace holder's pid",
    "providers/local.py": "the report of caretz's own local-model child process",
    "config/loading.py": "profiles.json and .mcp.json: a ConfigError names file and line",
    "config/layers.py": "--loop-guard-config, the user's flag, read by its pydantic schema",
    "permissions/project.py": ".caretz/settings.json: a RuleError names file and line",
    "permissions/settings.py": "a deny rule's pattern, written as JSON by caretz itself",
    "eval/replay.py": "session logs and corpora the user hands `caretz guard replay`",
    "eval/labels.py": "the labels file the user hands `caretz guard eval`",
    "eval/verdict_cache.py": "caretz's own cache of judge verdicts",
    "plugins/manifest.py": "a plugin's or marketplace's JSON files: a PluginError names the file",
    "plugins/store.py": "caretz's own record of the plugins installed",
}
JSON_READERS = {("json", "loads"), ("json", "load"), ("json", "JSONDecoder")}


def test_json_from_outside_is_read_only_through_inbound():
    found = {
        f"{name}: {ast.unparse(call)[:80]}"
        for name, tree in modules()
        for _, call in calls(tree)
        if name not in OWN_JSON
        and (
            called(call) in JSON_READERS
            or called(call)[1] in ("raw_decode", "json", "model_validate_json")
        )
    }
    assert found == set(), "read it with caretz.inbound.load_json (or name the file here)"


def test_the_named_readers_of_json_still_read_it():
    readers = {
        name
        for name, tree in modules()
        for _, call in calls(tree)
        if called(call) in JSON_READERS or called(call)[1] in ("raw_decode", "model_validate_json")
    }
    assert set(OWN_JSON) <= readers, "a reader named here moved: update OWN_JSON"


# --- bytes from outside --------------------------------------------------------------------

BOUNDARY = ("providers/", "mcp_client/", "web/", "hooks/", "sandbox/netproxy.py")


def decodes_anything(call: ast.Call) -> bool:
    """A `.decode(...)` no byte can make fail: with `errors=`, as latin-1 (a character a
    byte), or of what is ASCII by construction (httpx's raw_host, base64's output)."""
    if len(call.args) >= 2 or any(keyword.arg == "errors" for keyword in call.keywords):
        return True
    encoding = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else ""
    source = called(call)[0]
    return encoding in ("latin-1", "latin1") or "raw_host" in source or "b64encode" in source


def test_bytes_from_outside_are_decoded_so_no_byte_fails_it():
    strict = {
        f"{name}: {ast.unparse(call)}"
        for name, tree in modules()
        if name.startswith(BOUNDARY)
        for _, call in calls(tree)
        if called(call)[1] == "decode" and not decodes_anything(call)
    }
    assert strict == set(), "decode with errors='replace' (or through caretz.inbound)"


# --- what a provider hands the turn ---------------------------------------------------------

REPLY_TYPES = {
    "TextDelta",
    "ThinkingDelta",
    "ToolCallStarted",
    "ToolCall",
    "Usage",
    "ModelResponse",
}


def test_a_provider_hands_the_turn_only_what_its_draft_made():
    made = {
        f"{name}: {called(call)[1]}(…)"
        for name, tree in modules()
        if name.startswith("providers/") and name != "providers/draft.py"
        for _, call in calls(tree)
        if called(call)[1] in REPLY_TYPES
    }
    assert made == set(), "build the reply through MessageDraft (providers/draft.py)"


def test_parsers_are_fed_only_through_the_seam_that_reads_a_malformed_event():
    fed = {
        f"{name}:{where}"
        for name, tree in modules()
        for where, call in calls(tree)
        if called(call)[1] == "feed" and "parser" in called(call)[0]
    }
    assert fed == {"providers/sse.py:read_event"}


# --- the session log -----------------------------------------------------------------------


def test_only_the_event_log_writes_events_jsonl():
    """EventLog is its one writer (emit, through _write), opened where a session is built or rewound; the
    file's name is spelled where sessions are found."""
    opened = {
        f"{name}:{where}"
        for name, tree in modules()
        for where, call in calls(tree)
        if called(call)[1] in ("open_log", "EventLog")
    }
    assert opened == {
        "session/events.py:EventLog._write",
        "session/events.py:cut_torn_tail",
        "app/assembly.py:build",
        "app/rewinding.py:open_rewind",
    }
    named = {
        name
        for name, tree in modules()
        for _, call in calls(tree)
        if "events.jsonl" in ast.unparse(call) or "EVENTS_FILE" in ast.unparse(call)
    }
    assert named <= {"session/store.py", "eval/cli.py"}


# --- the data dir ----------------------------------------------------------------------------

CREATING = {"mkdir", "makedirs", "mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile"}
CREATING |= {"TemporaryDirectory", "write_text", "write_bytes", "symlink", "link"}
MOVING = {("shutil", "move"), ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile")}
MOVING |= {("shutil", "copytree"), ("os", "replace"), ("os", "rename")}
# The functions that create files or folders outside the data dir, and why.
ELSEWHERE = {
    "private_data.py": "the data dir's own: folders 0700, files 0600",
    "sandbox/safe_open.py": "the project's files, opened race-free (the file tools, rewind)",
    "checkpoints/restore.py:TreeWriter._write": "a rewind writes the project's files back",
    "checkpoints/restore.py:TreeWriter._make_parents": "the project's folders, on a rewind",
    "checkpoints/restore.py:TreeWriter._undo": "an undone rewind puts the project back",
    "checkpoints/restore.py:TreeWriter._move_aside": "a project file into the store's trash",
    "sandbox/gitwatch.py:GitWatch._move_aside": "into private_data's quarantine, then closed",
    "sandbox/gitwatch.py:_write_back": "the project's git files put back",
    "sandbox/runtime.py:SessionRuntime.filter_file": "a seccomp filter, 0400, in the run dir",
    "sandbox/runtime.py:SessionRuntime._session_dir_locked": "the session's /tmp (mkdtemp)",
    "permissions/proposals.py:save_allow_rules": "a rule saved in a settings file",
    "tools/output.py:FullOutput._open": "a long output kept in the system's tmp (mkstemp)",
    "providers/local.py:LocalServers._start": "the local model's log (a TemporaryFile)",
    "providers/local_runner.py:main": "/dev/null for the child's output",
    "mcp_client/manager.py:McpManager._errlog": "/dev/null for a server without a log",
    "session/events.py:open_log": "the log reopened to cut a torn line (never created)",
    "checkpoints/seed.py:seed_index": "the seeded index renamed over the shadow's (both made here)",
    "cli_options.py:stdout_reader_gone": "/dev/null in stdout's place",
    "batch/results.py:ResultsFile.append": "the batch's results file the user named, 0644",
    "sandbox/beneath.py": "the project's tree through a folder's fd (rewinds, the git watch)",
    "sandbox/door.py:_walk_into": "a folder opened to list it (O_DIRECTORY, nothing created)",
    "integrations/harbor.py:CaretzAgent._fill_context": "the trial's trajectory in Harbor's logs",
}


def creates(call: ast.Call) -> bool:
    owner, name = called(call)
    if name in CREATING or (owner, name) in MOVING:
        return True
    if (owner, name) == ("os", "open"):  # one that may write (a flags variable may)
        return any(word in ast.unparse(call) for word in ("O_CREAT", "O_WRONLY", "O_RDWR", "flag"))
    if name == "open":
        position = 1 if owner == "" else 0
        mode = call.args[position] if len(call.args) > position else None
        mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
        return isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+")
    return False


def test_files_and_folders_are_made_under_the_data_dir_only_by_private_data():
    made = set()
    for name, tree in modules():
        for where, call in calls(tree):
            if creates(call) and name not in ELSEWHERE and f"{name}:{where}" not in ELSEWHERE:
                made.add(f"{name}:{where}: {ast.unparse(call)[:70]}")
    assert made == set(), "make it with caretz.private_data (or say here why it is elsewhere)"


# The calls of private_data that hand back a file to write to, and the functions that write
# nothing to the one they open, and why.
FILE_OPENERS = {"open_file", "append_to"}
WRITE_NOTHING = {
    "checkpoints/git.py:ShadowGit.locked": "a lock file: flock only, nothing written",
    "mcp_client/manager.py:McpManager._errlog": "a stdio server's stderr: the server writes",
}


def guarded(tree: ast.AST) -> set[int]:
    """The calls made inside `with private_data.writing(…)` (its later items too)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.With | ast.AsyncWith):
            continue
        names = [
            called(i.context_expr)[1] if isinstance(i.context_expr, ast.Call) else ""
            for i in node.items
        ]
        if "writing" not in names:
            continue
        later = [i.context_expr for i in node.items[names.index("writing") + 1 :]]
        for part in [*later, *node.body]:
            inside |= {id(call) for call in ast.walk(part) if isinstance(call, ast.Call)}
    return inside


def imported_from_private_data(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "caretz.private_data"
        for alias in node.names
    }


def test_a_file_of_caretz_own_is_written_only_where_a_failure_is_one_data_write_failed():
    """private_data's functions raise DataWriteFailed for a full, read-only or closed data
    folder; a file they hand back is written inside `private_data.writing`, which does the
    same, so no OSError of a write of caretz's own reaches a front end as a traceback."""
    loose = set()
    for name, tree in modules():
        if name == "private_data.py":
            continue
        safe, imported = guarded(tree), imported_from_private_data(tree)
        for where, call in calls(tree):
            owner, function = called(call)
            opens = function in FILE_OPENERS and (owner == "private_data" or function in imported)
            if opens and id(call) not in safe and f"{name}:{where}" not in WRITE_NOTHING:
                loose.add(f"{name}:{where}: {ast.unparse(call)[:70]}")
    assert loose == set(), "write it with private_data.append/write_file, or inside writing()"


def test_a_library_that_writes_the_data_dir_writes_through_private_data():
    """prompt_toolkit's FileHistory appends with open(): its subclass writes each entry
    through private_data instead."""
    for name, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and "FileHistory" in map(ast.unparse, node.bases):
                methods = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
                assert "store_string" in methods, f"{name}: {node.name} writes with open()"
                assert "private_data.append" in ast.unparse(methods["store_string"])


# Where a data folder caretz cannot write becomes one line (or the turn's end), by front end.
DATA_FAILURE_EDGES = {
    "cli/__init__.py:main",  # any command: `caretz: …`, exit 1, the result object for JSON
    "agent/outcomes.py:internal_failure",  # a turn: its end, status error, exit 1
    "tools/registry.py:ToolRegistry._invoke",  # passed on, never a result the model reads
    "ui/repl.py:run_repl",  # the interactive session's start
    "ui/repl.py:Repl.loop",  # a line's work outside a turn: said once, the prompt goes on
    "ui/repl.py:Repl.collect_servers",  # at an idle prompt
    "ui/paste_input.py:PrivateHistory.store_string",  # the prompt's history
}


def test_each_front_end_turns_a_data_write_failure_into_one_line():
    named = set()
    for name, tree in modules():
        for where, node in scoped(tree):
            if "DataWriteFailed" in ast.unparse(node):
                named.add(f"{name}:{where}")
    assert named >= DATA_FAILURE_EDGES


def scoped(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Every `except` clause and isinstance() check in `tree`, with where it is."""
    for where, call in calls(tree):
        if called(call)[1] == "isinstance":
            yield where, call

    def walk(node: ast.AST, where: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{where}.{child.name}" if where else child.name
            if isinstance(child, ast.ExceptHandler) and child.type is not None:
                yield where, child.type
            yield from walk(child, inner)

    yield from walk(tree, "")


# --- numbers ---------------------------------------------------------------------------------


def test_numbers_are_read_as_ascii_digits_only():
    """`str.isdigit` is true of "²", which int() refuses, and int() reads "٢٢" as 22: each
    such test sits in a condition that also asks `isascii()`."""
    loose = set()
    for name, tree in modules():
        checks = [node for node in ast.walk(tree) if isinstance(node, ast.BoolOp)]
        for _, call in calls(tree):
            if called(call)[1] not in ("isdigit", "isdecimal", "isnumeric"):
                continue
            beside = [node for node in checks if any(sub is call for sub in ast.walk(node))]
            if not any("isascii()" in ast.unparse(node) for node in beside):
                loose.add(f"{name}:{call.lineno}: {ast.unparse(call)}")
    assert loose == set(), "use caretz.inbound.ascii_number or port_number"


def test_every_name_joined_to_the_data_dir_is_one_private_data_knows():
    """A data dir an older caretz left open is closed only when it holds nothing but what
    caretz keeps there: a new name at its top must be known, or that dir is refused."""
    from caretz.private_data import OWN_NAMES

    trees = dict(modules())
    everywhere = {k: v for tree in trees.values() for k, v in module_constants(tree).items()}
    joined = set()
    for name, tree in trees.items():
        constants = {**everywhere, **module_constants(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                left = ast.unparse(node.left)
                if "data_dir" in left and "/" not in left and not is_parameter(node.right):
                    joined.add(first_part(node.right, constants) or f"{name}: {ast.unparse(node)}")
            if isinstance(node, ast.Call) and called(node)[1] == "ApprovalStore":
                joined.add(first_part(node.args[1], constants) or ast.unparse(node))
    assert joined, "nothing joined to the data dir was found: has it been renamed?"
    assert joined <= OWN_NAMES, "add the name to caretz.private_data.OWN_NAMES"
    assert {"sessions", "checkpoints", "mcp-logs", "run", "schedule"} <= joined


def is_parameter(node: ast.expr) -> bool:
    """A lower-case name: a function's parameter (`data_dir / file_name`), checked where
    the function is called."""
    return isinstance(node, ast.Name) and node.id.islower()


def module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    return {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def first_part(node: ast.expr, constants: dict[str, ast.expr]) -> str | None:
    """The first path part an expression spells: "x", NAME = "x", Path("x") / …"""
    if isinstance(node, ast.Name) and node.id in constants:
        return first_part(constants[node.id], constants)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split("/")[0]
    if isinstance(node, ast.BinOp):
        return first_part(node.left, constants)
    if isinstance(node, ast.Call) and called(node)[1] == "Path" and node.args:
        return first_part(node.args[0], constants)
    return None
