"""MCP's two seams, held by reading the source:

- every session the command line opens (`-p`, stream-json, the REPL) opens without waiting
  for its MCP servers (`mcp_background=True`): its first request or its prompt comes at
  once, and each server's tools join as it is ready (mcp_client/background.py);
- an MCP tool is made in one place, `McpServers._add`, from a server's finished start, so
  the model is only ever offered the tools of a server that is ready.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.source_trees import parsed

CARETZ = Path(__file__).resolve().parents[1] / "caretz"
# Where the command line opens sessions.
FRONT_ENDS = ("commands", "ui", "cli")
OPENERS = {"from_settings", "open"}
TOOL_MAKER = ("mcp_client/servers.py", "_add")


def _receiver(call: ast.Call) -> str:
    func = call.func
    assert isinstance(func, ast.Attribute)
    value = func.value
    if isinstance(value, ast.Name):
        return value.id
    return value.attr if isinstance(value, ast.Attribute) else ""


def sessions_opened_waiting(source: str) -> list[int]:
    """The lines where a session class is opened without `mcp_background=True`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in OPENERS or not _receiver(node).endswith("Session"):
            continue
        background = [k for k in node.keywords if k.arg == "mcp_background"]
        if not any(isinstance(k.value, ast.Constant) and k.value.value is True for k in background):
            found.append(node.lineno)
    return found


def test_every_session_the_command_line_opens_does_not_wait_for_mcp_servers():
    opened, waiting = 0, []
    for folder in FRONT_ENDS:
        for path in sorted((CARETZ / folder).rglob("*.py")):
            source = path.read_text()
            opened += source.count(".from_settings(") + source.count("Session.open(")
            waiting += [
                f"{path.relative_to(CARETZ)}:{line}" for line in sessions_opened_waiting(source)
            ]
    assert opened >= 3, "the check no longer finds where the command line opens sessions"
    assert waiting == [], f"a session opened waiting for its MCP servers: {waiting}"


def test_the_session_check_sees_a_session_opened_waiting():
    source = (
        "session = ApiSession.from_settings(settings, view=output)\n"
        "other = Session.open(settings, view, mcp_background=True)\n"
        "third = app.Session.open(settings, view, mcp_background=False)\n"
    )
    assert sessions_opened_waiting(source) == [1, 3]


def mcp_tools_made(path: Path) -> list[tuple[str, int]]:
    """Where `McpTool(...)` is called in `path`: the enclosing function and the line."""
    made = []
    for function in ast.walk(parsed(path)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "McpTool"
            ):
                made.append((function.name, node.lineno))
    return made


def test_an_mcp_tool_is_made_only_from_a_server_that_finished_starting():
    makers = {
        (str(path.relative_to(CARETZ)), function)
        for path in sorted(CARETZ.rglob("*.py"))
        for function, _ in mcp_tools_made(path)
    }
    assert makers == {TOOL_MAKER}


# -- OAuth: every HTTP connection authenticates in one place --------------------------------
TRANSPORTS = {"sse_client", "streamable_http_client"}
# Where an HTTP server's transport is opened, and with what auth.
TRANSPORT_OPENERS = {
    ("mcp_client/connection.py", "_transport"): "session_auth",  # a session's
    ("mcp_client/login.py", "login"): "provider",  # `caretz mcp login`'s
}


def calls_in(path: Path) -> list[tuple[str, ast.Call]]:
    """Every call in `path` with the function it is made in ("" at module level)."""
    found = []
    tree = parsed(path)
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [(function.name, n) for n in ast.walk(function) if isinstance(n, ast.Call)]
    return found


def called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def test_every_http_mcp_connection_authenticates_through_one_place():
    """An HTTP server's transport is opened by `http_transport` alone, whose every client
    gets the `auth` it is given (an SDK transport left to make its own would send none); it is given `session_auth`'s in a session and the login's
    provider in `caretz mcp login`; the SDK's OAuth provider is made in oauth.py alone."""
    transports, openers, providers = [], {}, []
    for path in sorted(CARETZ.rglob("*.py")):
        where = str(path.relative_to(CARETZ))
        for function, call in calls_in(path):
            name = called_name(call)
            if name in TRANSPORTS or name == "AsyncClient":
                transports.append((where, function, {k.arg for k in call.keywords}))
            if name == "http_transport":
                openers[(where, function)] = ast.unparse(call.args[1]).split("(")[0]
        text = path.read_text()
        if "OAuthClientProvider" in text:
            providers.append(where)
    assert {(where, function) for where, function, _ in transports} == {
        ("mcp_client/connection.py", "http_transport"),
        ("mcp_client/connection.py", "_streamable_http"),
    }
    # Each client is made with the auth; the streamable transport is given that client.
    assert all(keywords & {"auth", "http_client"} for _, _, keywords in transports)
    assert openers == TRANSPORT_OPENERS
    assert providers == ["mcp_client/oauth.py"]


def test_the_logins_folder_is_named_by_the_token_store_alone():
    """The kept logins are read and written by mcp_client/tokens.py (0600, never printed):
    no other module names their folder."""
    naming = [
        str(path.relative_to(CARETZ))
        for path in sorted(CARETZ.rglob("*.py"))
        if '"mcp-oauth"' in path.read_text()
    ]
    assert naming == ["mcp_client/tokens.py", "private_data.py"]


# -- resources and prompts ----------------------------------------------------------------
# A prompt's `@server:uri` mentions are attached in Session.turn, which every front end's
# typed prompt passes; only a skill's or a custom command's own runner (whose prompt is a
# file's) reaches the turn driver besides it.
TURN_DRIVERS = {("app/session.py", "turn"), ("app/skill_run.py", "run_skill"),
                ("app/command_run.py", "run_command")}  # fmt: skip
# What a server is asked about its resources and prompts is asked in one place, which
# awaits a server still starting, keeps to mcp.callTimeout and says what failed in a line.
SERVER_ASKS = {"read_resource", "get_prompt", "list_resources"}
ASKER = "mcp_client/resources.py"


def calls_named(path: Path, names: set[str]) -> list[tuple[str, str]]:
    """(enclosing function, name) for each call of a function or method in `names`."""
    found = []
    for function in ast.walk(parsed(path)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in names:
                found.append((function.name, name))
    return found


def names_used(path: Path, names: set[str]) -> set[str]:
    """The names of `names` that `path` calls or refers to (`offers.list_resources`)."""
    used = set()
    for node in ast.walk(parsed(path)):
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        if isinstance(node, ast.Attribute | ast.Name) and name in names:
            used.add(name)
    return used


def test_a_typed_prompt_reaches_the_turn_driver_only_through_session_turn():
    drivers = {
        (str(path.relative_to(CARETZ)), function.name)
        for path in sorted(CARETZ.rglob("*.py"))
        for function in ast.walk(parsed(path))
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(
            (node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None))
            == "run_with_auto_resume"
            for node in ast.walk(function)
            if isinstance(node, ast.Attribute | ast.Name)
        )
    }
    assert drivers == TURN_DRIVERS


def test_a_server_is_asked_for_resources_and_prompts_in_one_place():
    askers = {
        str(path.relative_to(CARETZ))
        for path in sorted(CARETZ.rglob("*.py"))
        if path.name != "offers.py" and names_used(path, SERVER_ASKS)
    }
    assert askers == {ASKER}
    assert names_used(CARETZ / ASKER, SERVER_ASKS) == SERVER_ASKS


def test_the_call_check_sees_calls_in_functions(tmp_path: Path):
    source = tmp_path / "x.py"
    source.write_text("def f(o):\n    o.read_resource('u')\n\ndef g():\n    get_prompt()\n")
    assert calls_named(source, SERVER_ASKS) == [("f", "read_resource"), ("g", "get_prompt")]
    source.write_text("def f(c, o):\n    c.ask(o.list_resources)\n")
    assert names_used(source, SERVER_ASKS) == {"list_resources"}
