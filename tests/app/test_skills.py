"""A skill activated by the model in a session: its grant holds for the rest of that
work only, a second activation is not loaded again, and its instructions are kept word
for word through a compaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.modelserver import ModelServer, calls, text, tool


def test_a_skill_grants_for_its_work_only_and_survives_a_compaction(
    open_session: Any, server: ModelServer, env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    skill = home / ".claude" / "skills" / "stamp" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: stamp\ndescription: Stamp files\nallowed-tools: Bash(touch:*)\n---\n"
        "STAMP STEPS: touch what you are asked to.\n"
    )
    env["HOME"] = str(home)
    server.add(calls(("skill", {"name": "stamp"})), tool("bash", command="touch one.txt"))
    server.add(text("Stamped."))
    server.add(tool("bash", command="touch two.txt"), text("Tried."))
    server.add(calls(("skill", {"name": "stamp"})), text("Again."))
    server.add(text("SUMMARY OF THE SESSION"))  # the compaction's summary
    server.add(text("Carried on."))
    session = open_session(permission_mode="ask")  # nobody to ask: what no rule allows is denied
    workspace = session.workspace

    stamped = session.submit("stamp one")
    tried = session.submit("now touch two")
    again = session.submit("stamp once more")
    compacted = session.compact()
    after = session.submit("go on")

    assert (stamped.text, tried.text, again.text, after.text) == (
        "Stamped.", "Tried.", "Again.", "Carried on.",
    )  # fmt: skip
    assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    assert [d["tool"] for d in session.permission_denials] == ["bash"]
    second_load = server.requests[6].messages[-1]["content"][0]["content"]
    assert "loaded already" in str(second_load)
    assert compacted is not None and compacted.summarized > 0
    first = server.requests[-1].messages[0]["content"]
    first = first if isinstance(first, str) else first[0]["text"]
    assert "SUMMARY OF THE SESSION" in first
    assert '<skill_content name="stamp">' in first and "STAMP STEPS" in first
