"""Write the sessions of tests/data/sessions-v1/ with a given caretz, through its real CLI.

Each scenario runs `python -m caretz` against the loopback model server in a fresh data
dir and project, then keeps the session's events.jsonl and what `caretz sessions show ID`
and `caretz guard replay events.jsonl` printed for it (and, for the tool turn, the
`--output json` stdout). The committed files were written by the caretz whose events were
untyped dicts (commit e1f3c13), so the tests prove today's records read and write them
byte for byte:

    python -m tests.session.make_v1_sessions --python /path/to/old/venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.modelserver import ModelServer, Reply, calls, error, text, tool

OUT = Path(__file__).resolve().parents[1] / "data" / "sessions-v1"
API_KEY = "sk-ant-test-secret-0123456789"
JUDGE = "judge-model"
EVALUATOR = "goal-judge"
GO_TEST = "./gotest.sh ./db/..."
GO_TEST_SCRIPT = """#!/usr/bin/env bash
n=$(( $(cat .runs 2>/dev/null || echo 0) + 1 )); echo $n > .runs
dir=$(mktemp -d)
echo "$dir/db_test.go:$((10 + n)):9: undefined: testDB"
echo "FAIL	example.com/shop/db [build failed]"
exit 1
"""
STUCK = {
    "stuck": True,
    "confidence": 0.9,
    "reason": "testDB is declared in a file with a build tag the test run doesn't set.",
    "try_instead": "run go test with -tags integration.",
}
NO_PUSH = """
import json, sys
event = json.load(sys.stdin)
if "git push" in event["tool_input"].get("command", ""):
    print("pushing is not allowed from this project", file=sys.stderr)
    sys.exit(2)
"""


@dataclass
class Place:
    """One scenario's folders, server and the caretz that runs there."""

    python: str
    server: ModelServer
    home: Path
    project: Path

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("CARETZ_", "ANTHROPIC_", "OPENAI_"))
        }
        return {
            **env,
            "ANTHROPIC_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": self.server.url,
            "CARETZ_MODEL": "anthropic/claude-test",
            "CARETZ_DATA_DIR": str(self.data_dir),
            "CARETZ_CONFIG": str(self.home / "profiles.json"),
            "PYTHONUNBUFFERED": "1",
        }

    def run(self, *args: str, code: int | None = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.python, "-m", "caretz", *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if code is not None and done.returncode != code:
            raise SystemExit(f"caretz {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
        return done

    def config(self, config: dict[str, object]) -> None:
        (self.home / "profiles.json").write_text(json.dumps(config))

    def write(self, name: str, content: str, mode: int = 0o644) -> None:
        path = self.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        path.chmod(mode)

    def only_session(self) -> str:
        [folder] = (self.data_dir / "sessions").iterdir()
        return folder.name


def session_id(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if "session " in line).rsplit(" ", 1)[1]


# -- the scenarios: each scripts the server, runs caretz, returns the session's ID ------------


def tool_turn(place: Place) -> str:
    """Edits and bash in one turn, shown as --output json, then resumed by ID."""
    place.write("app.py", "print('hello')\n")
    place.server.add(
        calls(("read", {"path": "app.py"}), ("glob", {"pattern": "*.py"})),
        tool("edit", path="app.py", old_string="hello", new_string="hello, world"),
        tool("write", path="notes/todo.md", content="- ship it\n"),
        tool("bash", command="python3 app.py && ls notes"),
        tool("bash", command="exit 3"),
        text("app.py now greets the world; notes/todo.md lists the next step."),
    )
    first = place.run("-p", "make app.py greet the world", "--output", "json")
    (place.home / "output.jsonl").write_text(first.stdout)
    sid = place.only_session()
    place.server.add(text("It prints hello, world."))
    place.run("-p", "what does it print now?", "--resume", sid)
    return sid


def loop_guard(place: Place) -> str:
    """Stuck twice: redirected once, then stopped with a report (exit 3)."""
    place.write("gotest.sh", GO_TEST_SCRIPT, 0o755)
    place.server.add(*[tool("bash", command=GO_TEST) for _ in range(6)])
    place.server.add(text("testDB is still undefined; I need the build tags."))
    place.server.add(text(json.dumps(STUCK)), text(json.dumps(STUCK)), model=JUDGE)
    guard = ["--loop-guard", "active", "--loop-guard-model", f"anthropic/{JUDGE}"]
    done = place.run("-p", "make the integration tests pass", *guard, code=3)
    return session_id(done.stderr)


def goal(place: Place) -> str:
    """A goal met on its second turn."""
    place.server.add(
        tool("bash", command="echo wrong > done.txt"),
        text("Wrote done.txt."),
        tool("bash", command="echo ok > done.txt && cat done.txt"),
        text("done.txt now says ok."),
    )
    verdicts = [
        {"met": False, "impossible": False, "reason": "it says wrong", "next_step": "write ok"},
        {"met": True, "impossible": False, "reason": "cat printed ok", "next_step": ""},
    ]
    place.server.add(*[text(json.dumps(v)) for v in verdicts], model=EVALUATOR)
    done = place.run("--goal", "done.txt says ok", "--goal-model", f"anthropic/{EVALUATOR}")
    return session_id(done.stderr)


def checkpoint_rewind(place: Place) -> str:
    """A turn that changes files takes a checkpoint; `caretz rewind` puts them back."""
    place.write("README.md", "# shop\n")
    place.write("src/main.py", "print('v1')\n")
    place.server.add(
        tool("write", path="src/main.py", content="print('v2')\n"),
        tool("bash", command="rm README.md && echo built > build.txt"),
        text("Reshaped."),
    )
    done = place.run("-p", "reshape the project")
    sid = session_id(done.stderr)
    place.run("rewind", sid, "--turn", "1")
    place.server.add(text("Back to the start."))
    place.run("-p", "where are we?", "--resume", sid)
    return sid


def permission_denial(place: Place) -> str:
    """Ask mode with nobody to ask denies a write; a disallowed tool is blocked."""
    disallowed = {"disallowedTools": {"bash": ["rm -rf"]}}
    place.config({"profiles": {"general": {"loopGuard": {"detectors": disallowed}}}})
    place.server.add(
        tool("write", path="notes.txt", content="x\n"),
        tool("bash", command="rm -rf build"),
        tool("bash", command="git status"),
        text("I could not write notes.txt: the session asks first, and nobody can answer."),
    )
    done = place.run(
        "-p", "write notes", "--permission-mode", "ask", "--disallowed-tools", "Bash(git:*)"
    )
    return session_id(done.stderr)


def hook_run(place: Place) -> str:
    """A PreToolUse hook blocks git push, and lets another command through."""
    hook = place.project / "hooks" / "no_push.py"
    place.write("hooks/no_push.py", NO_PUSH.lstrip())
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": f"python3 {hook}"}]}
    place.config({"profiles": {"general": {"hooks": {"PreToolUse": [entry]}}}})
    place.server.add(
        tool("bash", command="git push origin main"),
        tool("bash", command="echo fine > fine.txt"),
        text("I will open a pull request instead."),
    )
    done = place.run("-p", "ship it")
    return session_id(done.stderr)


def provider_retry(place: Place) -> str:
    """An overloaded server, then a stream cut mid-reply: both retried."""
    place.server.add(
        error(529, "Overloaded", retry_after=0),
        Reply(text="The answer is", drop_after_events=4),
        text("The answer is 42."),
    )
    done = place.run("-p", "what is the answer?")
    return session_id(done.stderr)


def compaction(place: Place) -> str:
    """A long turn outgrows a small window: older steps are summarized."""
    place.config({"profiles": {"general": {"contextWindow": 4000}}})
    big = "python3 -c \"print('{}' * 6000)\""
    plan = {"todos": [{"content": "Print the letters", "status": "in_progress"}]}
    place.server.add(
        calls(("todo", plan), ("write", {"path": "notes.txt", "content": "letters\n"})),
        tool("bash", command=big.format("A")),
        Reply(tool_calls=[("bash", {"command": big.format("B")})], usage=(3000, 20, 0)),
        text("SUMMARY: printed A's; the plan and notes.txt are in place."),
        text("done"),
    )
    done = place.run("-p", "print the letters")
    return session_id(done.stderr)


SCENARIOS: dict[str, Callable[[Place], str]] = {
    "tool_turn": tool_turn,
    "loop_guard": loop_guard,
    "goal": goal,
    "checkpoint_rewind": checkpoint_rewind,
    "permission_denial": permission_denial,
    "hook_run": hook_run,
    "provider_retry": provider_retry,
    "compaction": compaction,
}


def write_scenario(name: str, python: str, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=f"caretz-v1-{name}-") as tmp, ModelServer() as server:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        place = Place(python, server, home, project)
        sid = SCENARIOS[name](place)
        folder = out / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        events = place.data_dir / "sessions" / sid / "events.jsonl"
        shutil.copyfile(events, folder / "events.jsonl")
        shown = place.run("sessions", "show", sid)
        (folder / "sessions-show.txt").write_text(shown.stdout)
        replayed = place.run("guard", "replay", str(events), code=None)
        (folder / "guard-replay.txt").write_text(replayed.stdout)
        (folder / "guard-replay.code").write_text(f"{replayed.returncode}\n")
        if (home / "output.jsonl").exists():
            shutil.copyfile(home / "output.jsonl", folder / "output.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the interpreter of the caretz to run")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("names", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args()
    for name in args.names:
        write_scenario(name, args.python, args.out)
        print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()
