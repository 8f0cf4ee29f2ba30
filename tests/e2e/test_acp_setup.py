"""`caretz acp` before and around the turn: its settings and key, what a prompt may carry,
and that nothing of it reaches a `caretz -p` run."""

from __future__ import annotations

import sys

from acp import RequestError, text_block
from acp.schema import (
    AvailableCommandsUpdate,
    EmbeddedResourceContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    TextResourceContents,
)

from tests.e2e.acp_editor import Editor, caretz_acp, run, texts
from tests.e2e.hook_scripts import hooks_entry, project_settings, write_hook
from tests.e2e.sandbox_folders import require
from tests.importtime import modules_imported_by_a_run
from tests.modelserver import text, tool


def test_files_the_editor_attaches_reach_the_model_with_the_unsaved_buffer(
    caretz, server, workspace
):
    (workspace / "app.py").write_text("on disk\n")
    server.add(text("Seen."))
    app = str(workspace / "app.py")
    editor = Editor(buffers={app: "unsaved edit in the editor\n"})
    prompt = [
        text_block("compare"),
        ResourceContentBlock(type="resource_link", uri=f"file://{app}", name="app.py"),
        text_block("with"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri=f"file://{workspace}/spec.md", text="the spec\n"),
        ),
    ]

    async def scenario() -> str:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            return (await conn.prompt(session_id=new.session_id, prompt=prompt)).stop_reason

    assert run(scenario()) == "end_turn"
    assert editor.reads == [app]
    sent = server.requests[0].messages[-1]["content"]
    sent = sent if isinstance(sent, str) else sent[0]["text"]
    assert sent.startswith("compare @app.py with @spec.md\n\n")
    assert '<file path="app.py">\nunsaved edit in the editor\n</file>' in sent
    assert '<file path="spec.md">\nthe spec\n</file>' in sent
    assert "on disk" not in sent


def test_without_a_key_the_editor_is_told_which_variable_to_set(caretz, server, workspace):
    editor = Editor()

    async def scenario() -> None:
        async with caretz_acp(caretz, editor, env={"ANTHROPIC_API_KEY": None}) as (conn, ready):
            (method,) = ready.auth_methods
            assert method.type == "env_var"
            assert [var.name for var in method.vars] == ["ANTHROPIC_API_KEY"]
            try:
                await conn.new_session(cwd=str(workspace), mcp_servers=[])
            except RequestError as error:
                assert error.code == -32000
                assert "set ANTHROPIC_API_KEY" in str(error)
            else:
                raise AssertionError("a session opened without a key")

    run(scenario())
    assert not (caretz.data_dir / "sessions").exists()  # nothing started
    assert server.requests == []


def test_a_prompt_to_a_session_never_opened_is_refused_in_one_line(caretz, server, workspace):
    async def scenario() -> None:
        async with caretz_acp(caretz, Editor()) as (conn, _):
            try:
                await conn.prompt(session_id="nope", prompt=[text_block("hi")])
            except RequestError as error:
                assert str(error) == "no open session 'nope': create or load it first"
            else:
                raise AssertionError("a prompt ran without a session")

    run(scenario())


def test_a_bad_root_flag_is_one_line_and_exit_2_before_any_protocol(caretz):
    done = caretz("--permission-mode", "sometimes", "acp")
    assert done.code == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--permission-mode 'sometimes'" in done.stderr


def test_a_headless_run_never_imports_the_acp_sdk(caretz, server):
    server.add(text("hello"))
    loaded = modules_imported_by_a_run(caretz.workspace, caretz.environment())
    assert "caretz" in loaded
    assert not {name for name in loaded if name == "acp" or name.startswith(("acp.", "caretz.acp"))}


def test_when_the_editor_closes_the_connection_the_session_closes_and_stops_its_jobs(
    caretz, server, workspace
):
    require("bwrap")
    server.add(tool("bash", command="sleep 600", background=True), text("Started it."))

    async def scenario() -> str:
        async with caretz_acp(caretz, Editor()) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[text_block("serve")])
            return new.session_id

    session_id = run(scenario())  # leaving it closes caretz's stdin

    events = caretz.events(session_id)
    (stopped,) = [e for e in events if e["type"] == "Jobs.Stopped"]
    assert len(stopped["jobs"]) == 1


def test_an_mcp_server_the_editor_passes_starts_with_the_session_and_its_calls_ask(
    caretz, server, workspace
):
    # The editor's entry has no start limit of its own: the profile's, far above need.
    caretz.write_config({"profiles": {"general": {"mcp": {"startupTimeout": "10m"}}}})
    server.add(tool("mcp__time__get_current_time", timezone="Europe/Paris"), text("Evening."))
    editor = Editor(answers=["allow-once"])
    time = McpServerStdio(
        name="time",
        command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
        env=[],
    )

    async def scenario() -> str:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[time])
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("time?")])
            return answer.stop_reason

    assert run(scenario()) == "end_turn"
    assert "mcp__time__convert_time" in server.requests[0].tool_names
    (question,) = editor.questions  # it runs outside the sandbox: caretz asks in auto mode
    (call,) = editor.started()
    assert question.tool_call.tool_call_id == call.tool_call_id
    result = editor.finished(call.tool_call_id)
    assert result.status == "completed" and "Europe/Paris" in texts(result.content)


def test_the_project_s_skills_and_custom_commands_are_offered_and_a_slash_prompt_runs_one(
    caretz, server, workspace
):
    commands = workspace / ".caretz" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a pull request\nargument-hint: PR-NUMBER\n---\n"
        "Review pull request $1 and list what you would change.\n"
    )
    skills = workspace / ".claude" / "skills"
    for name, extra in (("lint", ""), ("background", "user-invocable: false\n")):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The {name} skill\n{extra}---\nDo it.\n"
        )
    server.add(text("Looks fine."))
    editor = Editor()

    async def scenario() -> tuple[str, str, str]:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await editor.until(lambda: bool(editor.of(AvailableCommandsUpdate)))
            typo = await conn.prompt(session_id=new.session_id, prompt=[text_block("/revew 42")])
            said = editor.text()
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("/review 42")])
            return typo.stop_reason, said, answer.stop_reason

    typo, said, stop = run(scenario())
    # A name that is no command: caretz's one line is the answer, and nothing is sent.
    assert typo == "end_turn"
    assert said.count("unknown command /revew: did you mean /review? (nothing was sent)") == 1
    assert len(server.requests) == 1 and stop == "end_turn"
    (offered,) = editor.of(AvailableCommandsUpdate)
    lint, review = offered.available_commands  # the skills the user may run, then commands
    assert (lint.name, lint.description) == ("lint", "The lint skill")
    assert (review.name, review.description) == ("review", "Review a pull request")
    assert review.input.root.hint == "PR-NUMBER"
    sent = server.requests[0].messages[-1]["content"]
    sent = sent if isinstance(sent, str) else sent[0]["text"]
    assert sent.startswith("Review pull request 42 and list what you would change.")


def test_the_key_may_come_from_an_env_file_given_before_acp(caretz, server, workspace):
    keys = workspace.parent / "keys.env"
    keys.write_text("ANTHROPIC_API_KEY=sk-ant-from-the-file\n")
    keys.chmod(0o600)
    server.add(text("Hello."))
    flags = ("--env-file", str(keys))

    async def scenario() -> str:
        env = {"ANTHROPIC_API_KEY": None}
        async with caretz_acp(caretz, Editor(), *flags, env=env) as (conn, ready):
            assert ready.auth_methods == []
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            return (
                await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
            ).stop_reason

    assert run(scenario()) == "end_turn"
    assert server.requests[0].headers["x-api-key"] == "sk-ant-from-the-file"


BLOCK_DEPLOYS = """
import json, sys
if "deploy" in json.load(sys.stdin)["prompt"]:
    print("no deploys on Fridays", file=sys.stderr)
    sys.exit(2)
"""


def test_a_prompt_a_hook_blocks_is_refused_and_said_once(caretz, server, workspace):
    command = write_hook(workspace, "no_deploys", BLOCK_DEPLOYS)
    project_settings(workspace, {"hooks": {"UserPromptSubmit": [hooks_entry(command)]}})
    editor = Editor()

    async def scenario() -> str:
        async with caretz_acp(caretz, editor) as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("deploy")])
            return answer.stop_reason

    assert run(scenario()) == "refusal"
    assert server.requests == []
    said = editor.text()
    assert said.count("a UserPromptSubmit hook blocked the prompt") == 1
    assert "no deploys on Fridays" in said


def test_a_limit_that_ends_the_turn_is_max_turn_requests_with_caretz_s_line(
    caretz, server, workspace
):
    (workspace / "a.txt").write_text("a\n")
    server.add(tool("read", path="a.txt"), tool("read", path="a.txt"))
    editor = Editor()

    async def scenario() -> str:
        async with caretz_acp(caretz, editor, "--max-tool-calls", "1") as (conn, _):
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("read")])
            return answer.stop_reason

    assert run(scenario()) == "max_turn_requests"
    assert "**caretz:** tool call limit reached: 1 of --max-tool-calls 1" in editor.text()
