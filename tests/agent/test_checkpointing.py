"""TurnCheckpoints on a real store and a real session log: when a checkpoint is taken,
what a failure does to the turn, and which turn a checkpoint belongs to."""

from __future__ import annotations

from pathlib import Path

import pytest

from caretz.agent.checkpointing import TurnCheckpoints, may_change_files
from caretz.checkpoints import CheckpointMeta, CheckpointStore, GitNotFound, SnapshotLimits
from caretz.messages import ToolCall
from caretz.session.events import EventLog, read_events
from caretz.session.records.loop import TurnEnded, TurnStarted
from caretz.tools.base import ToolContext
from caretz.tools.registry import ToolRegistry, default_tools
from tests.checkpoints.helpers import require_git, tree_state, write


@pytest.fixture(autouse=True)
def git_binary() -> str:
    return require_git()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    for name in ("a.txt", "b.txt", "c.txt"):
        write(folder, name, f"{name}\n")
    return folder


@pytest.fixture
def log(tmp_path: Path) -> EventLog:
    opened = EventLog(tmp_path / "session" / "events.jsonl")
    yield opened
    opened.close()


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"call_{name}", name=name, arguments=dict(arguments))


def events_of(log: EventLog, prefix: str = "Checkpoint.") -> list[dict]:
    assert log.path is not None
    if not log.path.exists():
        return []
    return [e.to_dict() for e in read_events(log.path) if e.type.startswith(prefix)]


def start(log: EventLog, turn: int, prompt: str = "do it", agent: str = "main") -> None:
    log.emit(TurnStarted(turn=turn, agent=agent, prompt=prompt))


def attached(store: CheckpointStore, log: EventLog, **kwargs) -> TurnCheckpoints:
    checkpoints = TurnCheckpoints(store, **kwargs)
    checkpoints.attach("s1", log)
    return checkpoints


def test_only_calls_that_may_change_files_need_a_checkpoint():
    assert may_change_files(call("write", path="a"))
    assert may_change_files(call("edit", path="a"))
    assert may_change_files(call("bash", command="ls"))
    assert may_change_files(call("some_new_tool"))  # unknown tools count as changes
    for name in ("read", "glob", "grep", "task"):
        assert not may_change_files(call(name))
    assert not may_change_files(call("bash", command="make"), shell_can_write=False)
    # What a tool says it does decides before its name: the plan tool changes no file.
    assert not may_change_files(call("todo"), effect="internal")
    assert may_change_files(call("read"), effect="edit")


def test_one_checkpoint_per_turn_before_its_first_change_and_settled_at_its_end(
    project, tmp_path, log
):
    store = CheckpointStore.open(tmp_path / "data", project)
    checkpoints = attached(store, log)
    ctx = ToolContext(workspace=project)

    start(log, 1, "tidy up")
    checkpoints.before_call(call("read", path="a.txt"), ctx)
    assert store.list("s1") == []  # reading is no change
    checkpoints.before_call(call("write", path="a.txt"), ctx)
    write(project, "a.txt", "changed\n")
    start(log, 1, "a subagent's job", agent="helper")  # a subagent's turn is its parent's
    checkpoints.before_call(call("bash", command="rm b.txt"), ctx)
    (project / "b.txt").unlink()
    log.emit(TurnEnded(turn=1, agent="helper", status="done"))
    assert store.list("s1")[0].turn_changed is None  # the main turn still runs
    log.emit(TurnEnded(turn=1, agent="main", status="done"))

    listed = store.list("s1")
    assert [(cp.turn, cp.kind, cp.prompt) for cp in listed] == [(1, "turn", "tidy up")]
    assert sorted(listed[0].turn_changed or ()) == ["a.txt", "b.txt"]
    created, settled = events_of(log)
    assert (created["type"], created["turn"], created["project"]) == (
        "Checkpoint.Created",
        1,
        str(project.resolve()),
    )
    # The turn's end says which files it changed, for the undo line.
    assert (settled["type"], settled["turn"], settled["checkpoint"]) == (
        "Checkpoint.Settled",
        1,
        created["id"],
    )
    assert sorted(settled["changed"]) == ["a.txt", "b.txt"] and settled["changed_count"] == 2

    start(log, 2, "and again")
    checkpoints.before_call(call("edit", path="c.txt"), ctx)
    assert [cp.turn for cp in store.list("s1")] == [1, 2]


def test_a_turn_whose_commands_changed_nothing_settles_with_no_change(project, tmp_path, log):
    store = CheckpointStore.open(tmp_path / "data", project)
    checkpoints = attached(store, log)

    start(log, 1, "look around")
    checkpoints.before_call(call("bash", command="ls"), ToolContext(workspace=project))
    log.emit(TurnEnded(turn=1, agent="main", status="done"))

    created, settled = events_of(log)
    assert created["type"] == "Checkpoint.Created"  # a command may write: taken first
    assert settled["type"] == "Checkpoint.Settled"
    assert (settled["changed"], settled["changed_count"]) == ([], 0)


def test_a_project_too_large_is_one_warning_and_the_turns_go_on(project, tmp_path, log):
    limits = SnapshotLimits(max_files=2)
    store = CheckpointStore.open(tmp_path / "data", project, limits=limits)
    checkpoints = attached(store, log)
    ctx = ToolContext(workspace=project)

    for turn in (1, 2):
        start(log, turn)
        checkpoints.before_call(call("write", path="a.txt"), ctx)
        log.emit(TurnEnded(turn=turn, agent="main", status="done"))

    failed = events_of(log)
    assert len(failed) == 1 and failed[0]["type"] == "Checkpoint.Failed" and failed[0]["off"]
    assert "checkpoints are off here" in failed[0]["message"]
    assert not checkpoints.active


def test_staging_in_the_background_reports_a_project_too_large_at_the_next_turn(
    project, tmp_path, log
):
    store = CheckpointStore.open(tmp_path / "data", project, limits=SnapshotLimits(max_files=2))
    checkpoints = attached(store, log)

    checkpoints.prepare_in_background()
    assert checkpoints._preparing is not None
    checkpoints._preparing.join()
    assert events_of(log) == []  # nothing printed from the background thread
    start(log, 1)

    failed = events_of(log)
    assert [e["stage"] for e in failed] == ["prepare"]
    assert "over the limit of 2 files" in failed[0]["message"]


def test_a_failed_checkpoint_is_a_warning_and_the_next_turn_tries_again(project, tmp_path, log):
    store = CheckpointStore.open(tmp_path / "data", project)
    checkpoints = attached(store, log)
    ctx = ToolContext(workspace=project)
    blocker = store.folder / "git"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("in the way\n")  # the shadow repository cannot be made

    start(log, 1)
    checkpoints.before_call(call("write", path="a.txt"), ctx)
    log.emit(TurnEnded(turn=1, agent="main", status="done"))
    blocker.unlink()
    start(log, 2)
    checkpoints.before_call(call("write", path="a.txt"), ctx)

    found = events_of(log)
    assert found[0]["type"] == "Checkpoint.Failed" and found[0]["stage"] == "checkpoint"
    assert found[0]["message"].startswith("checkpoint failed: ")
    assert found[0]["message"].endswith("; the turn goes on")
    assert checkpoints.active
    assert [e["type"] for e in found[1:]] == ["Checkpoint.Created"]
    assert [cp.turn for cp in store.list("s1")] == [2]


def test_without_git_checkpoints_are_off_and_say_so_once(project, tmp_path, log):
    no_git = {"PATH": str(tmp_path / "nowhere")}
    checkpoints = TurnCheckpoints.opened(tmp_path / "data", project, 1024, env=no_git)
    checkpoints.attach("s1", log)
    start(log, 1)
    checkpoints.before_call(call("write", path="a.txt"), ToolContext(workspace=project))

    assert [e["message"] for e in events_of(log)] == [
        "git not found: checkpoints are off; install git"
    ]


def test_the_store_opens_at_the_first_change_not_at_the_start(project, tmp_path, log):
    opened: list[CheckpointStore] = []

    def opener() -> CheckpointStore:
        opened.append(CheckpointStore.open(tmp_path / "data", project))
        return opened[-1]

    checkpoints = TurnCheckpoints(None, opener=opener)
    checkpoints.attach("s1", log)
    ctx = ToolContext(workspace=project)
    start(log, 1)
    checkpoints.before_call(call("read", path="a.txt"), ctx)
    assert opened == [] and checkpoints.active  # a session that only reads never opens it

    checkpoints.before_call(call("write", path="a.txt"), ctx)
    checkpoints.before_call(call("write", path="b.txt"), ctx)
    assert len(opened) == 1 and checkpoints.store is opened[0]
    assert [e["type"] for e in events_of(log)] == ["Checkpoint.Created"]


def test_a_store_that_cannot_open_switches_checkpoints_off_and_says_so(project, log):
    def opener() -> CheckpointStore:
        raise GitNotFound("git not found")

    checkpoints = TurnCheckpoints(None, opener=opener)
    checkpoints.attach("s1", log)
    start(log, 1)
    checkpoints.before_call(call("write", path="a.txt"), ToolContext(workspace=project))
    checkpoints.before_call(call("write", path="b.txt"), ToolContext(workspace=project))

    assert not checkpoints.active
    assert [(e["stage"], e["message"]) for e in events_of(log)] == [
        ("open", "git not found: checkpoints are off")
    ]


def test_a_long_snapshot_says_so_while_it_runs_and_the_log_has_what_each_cost(
    project, tmp_path, log
):
    limits = SnapshotLimits(notice_files=3)  # the project's three files are "many" here
    store = CheckpointStore.open(tmp_path / "data", project, limits=limits)
    clock = iter([10.0, 12.5, 20.0, 20.25, 30.0, 30.5])  # taken, settled: 2.5 s, 0.25 s
    checkpoints = attached(store, log, timer=lambda: next(clock))
    ctx = ToolContext(workspace=project)

    start(log, 1)
    checkpoints.before_call(call("write", path="a.txt"), ctx)
    write(project, "a.txt", "changed\n")
    log.emit(TurnEnded(turn=1, agent="main", status="done"))

    saving, created, settled = events_of(log)
    assert (saving["type"], saving["stage"], saving["files"]) == (
        "Checkpoint.Saving",
        "checkpoint",
        3,
    )
    assert saving["message"].startswith(
        "checkpoint: saving 3 files (0.0 MB) before the first change"
    )
    assert (created["type"], created["duration_s"]) == ("Checkpoint.Created", 2.5)
    assert (settled["type"], settled["duration_s"]) == ("Checkpoint.Settled", 0.25)
    # A later snapshot that hashes one file is no news.
    start(log, 2)
    checkpoints.before_call(call("write", path="b.txt"), ctx)
    assert [e["type"] for e in events_of(log)][-1] == "Checkpoint.Created"


def turn_tools(checkpoints: TurnCheckpoints, no_hooks: bool = True) -> ToolRegistry:
    """The real file tools and bash, with the checkpoints' checks around each call."""
    return ToolRegistry(
        default_tools(sandboxed=False),
        before_call=(checkpoints.before_call,),
        after_call=(checkpoints.follow_calls(lambda: no_hooks),),
    )


def ran(tools: ToolRegistry, project: Path, name: str, **arguments: object) -> None:
    result = tools.run(call(name, **arguments), ToolContext(workspace=project))
    assert result.ok, result.output


def last_of(log: EventLog, kind: str) -> dict:
    return [e for e in events_of(log) if e["type"] == kind][-1]


@pytest.mark.parametrize("no_hooks", [True, False])
def test_a_turn_of_file_tool_writes_ends_looking_at_those_files_alone(
    project, tmp_path, log, no_hooks
):
    store = CheckpointStore.open(tmp_path / "data", project)
    checkpoints = attached(store, log)
    tools = turn_tools(checkpoints, no_hooks)
    before = tree_state(project)

    start(log, 1)
    ran(tools, project, "write", path="new/deeper/made.txt", content="made\n")
    ran(tools, project, "read", path="a.txt")
    ran(tools, project, "edit", path="a.txt", old_string="a.txt", new_string="changed")
    ran(tools, project, "read", path="b.txt")
    ran(tools, project, "write", path="b.txt", content="other\n")
    ran(tools, project, "write", path="b.txt", content="b.txt\n")  # and back
    write(project, "c.txt", "someone else's\n")  # not by caretz, while the turn ran
    log.emit(TurnEnded(turn=1, agent="main"))

    # With no hook that could run a command, the turn's end looks at what its tools wrote;
    # c.txt is seen by the next checkpoint, as a change made outside caretz.
    by_caretz = ["a.txt", "new/deeper/made.txt"]
    assert last_of(log, "Checkpoint.Settled")["changed"] == (
        by_caretz if no_hooks else sorted([*by_caretz, "c.txt"])
    )
    start(log, 2)
    ran(tools, project, "bash", command="true")
    turn_1 = store.for_turn("s1", 1)
    outside = {conflict.path for conflict in store.preview(turn_1).conflicts}
    assert outside == ({"c.txt"} if no_hooks else set())

    store.restore(turn_1, CheckpointMeta("s1", 3, "undo"), force=True)
    assert tree_state(project) == before


def test_a_command_in_the_turn_makes_its_end_look_at_the_whole_tree(project, tmp_path, log):
    store = CheckpointStore.open(tmp_path / "data", project)
    checkpoints = attached(store, log)
    tools = turn_tools(checkpoints)
    before = tree_state(project)

    start(log, 1)
    ran(tools, project, "write", path="tool.txt", content="by the write tool\n")
    ran(tools, project, "bash", command="rm b.txt; mkdir -p made/here; echo x > made/here/new.txt")
    ran(tools, project, "write", path="later.txt", content="written after the command\n")
    log.emit(TurnEnded(turn=1, agent="main"))

    changed = ["b.txt", "later.txt", "made/here/new.txt", "tool.txt"]
    assert last_of(log, "Checkpoint.Settled")["changed"] == changed
    store.restore(store.for_turn("s1", 1), CheckpointMeta("s1", 2, "undo"))
    assert tree_state(project) == before


def test_a_file_tool_call_whose_result_never_came_makes_the_end_look_at_everything(
    project, tmp_path, log
):
    store = CheckpointStore.open(tmp_path / "data", project)
    checkpoints = attached(store, log)
    checkpoints.follow_calls(lambda: True)

    start(log, 1)
    checkpoints.before_call(
        call("write", path="a.txt"), ToolContext(workspace=project, effect="edit")
    )
    write(project, "a.txt", "half written\n")  # the call was cut off: no result to read
    write(project, "new/b.txt", "b\n")
    log.emit(TurnEnded(turn=1, agent="main"))

    assert last_of(log, "Checkpoint.Settled")["changed"] == ["a.txt", "new/b.txt"]
