"""`Session.run_shell` (`!command`): a command run as the user in the session's sandbox,
its output handed to the view as it arrives and to the next turn's prompt."""

from __future__ import annotations

from caretz.app.shell_mode import ShellRun
from tests.app.test_cancel import cancel_when, processes_running, wait_for, waiting_command
from tests.modelserver import text


def test_output_reaches_the_view_as_it_arrives_and_the_next_prompt_carries_it(
    open_session, server, workspace
):
    server.add(text("Seen."))
    session = open_session()
    release = workspace / "release"
    seen: list[str] = []

    def release_once_first_line_shown(piece: str) -> None:
        seen.append(piece)
        release.touch()  # the command waits for this: shown before it ended

    command = f"echo one; while [ ! -e {release.name} ]; do sleep 0.05; done; echo two"
    run = session.run_shell(command, release_once_first_line_shown)

    assert seen[0] == "one\n" and "".join(seen) == "one\ntwo\n"
    assert (run.exit_code, run.output) == (0, "one\ntwo\n")
    session.turn("and?")
    sent = server.requests[0].messages[-1]["content"]
    assert sent == f"The user ran `{command}` (exit 0):\n```\none\ntwo\n```\n\nand?"
    session.turn("again")
    assert server.requests[-1].messages[-1]["content"] == "again"  # sent once


def test_cancel_from_another_thread_ends_the_command_and_its_group(open_session, workspace):
    session = open_session()
    command, token = waiting_command(workspace)
    canceller = cancel_when(session, lambda: (workspace / "started").exists())

    run = session.run_shell(command, lambda piece: None)

    canceller.join()
    assert run.ended_by == "interrupted" and run.exit_code is None
    wait_for(lambda: not processes_running(token), "the command's group to end")


def test_output_with_backticks_is_fenced_longer_than_them():
    run = ShellRun(
        command="cat README.md", exit_code=0, output="```python\nx = 1\n```\n", duration_s=0.1
    )

    assert run.context() == (
        "The user ran `cat README.md` (exit 0):\n````\n```python\nx = 1\n```\n````"
    )
