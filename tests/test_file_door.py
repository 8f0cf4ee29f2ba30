"""Every project file caretz reads or writes itself goes through the door.

The door is caretz/sandbox/door.py (a project's files read by caretz: roots, hidden paths,
no symlink out, regular files with one link, bounded), caretz/sandbox/beneath.py (steps
below a folder that follow no symlink: a rewind's restores, the git watch's put-backs)
and caretz/sandbox/safe_open.py, the opener both (and the model's file tools) use.

This scan (the AST of every module in caretz/) lists each call that opens, reads, writes,
renames, removes or lists a file by its path. Outside the door, each one must be listed in
ALLOWED with why it never touches a project's file on the project's say-so: caretz's own
data and config dirs, /proc of caretz's own processes, paths the user typed, or no file
at all. New code that reads a project path another way fails here: route it through the
door, or add it to ALLOWED with a reason that says why it is not a project's file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import caretz

PACKAGE = Path(caretz.__file__).resolve().parent
DOOR = {"caretz/sandbox/door.py", "caretz/sandbox/beneath.py", "caretz/sandbox/safe_open.py"}
# caretz's own data dir has a door of its own: folders 0700 and files 0600, whatever the umask.
DATA_DOOR = "caretz/private_data.py"

# Methods of pathlib.Path that open, write, remove or list (`.replace` and `.rename` with
# one argument: str.replace takes two).
PATH_METHODS = {
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rmdir",
    "mkdir", "touch", "symlink_to", "hardlink_to", "iterdir", "glob", "rglob",
    "chmod", "lchmod", "rename", "replace",
}  # fmt: skip
OS_CALLS = {
    "open", "replace", "rename", "renames", "unlink", "remove", "rmdir", "removedirs",
    "mkdir", "makedirs", "symlink", "link", "chmod", "chown", "lchown", "truncate",
    "utime", "mkfifo", "mknod", "listdir", "scandir", "walk", "fwalk",
}  # fmt: skip
# Modules whose functions named here take a path and touch the file (None: any function).
MODULE_CALLS: dict[str, set[str] | None] = {
    "shutil": {
        "move", "copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "rmtree",
        "chown", "make_archive", "unpack_archive",
    },
    "tempfile": {
        "mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile", "TemporaryDirectory",
        "SpooledTemporaryFile",
    },
    "glob": {"glob", "iglob"},
    "io": {"open", "FileIO"},
    "codecs": {"open"},
    "dotenv": None,
}  # fmt: skip
NOT_FILES = {"dataclasses"}  # `dataclasses.replace(x)` is no Path.replace

DATA = "caretz's own data dir"
PROC = "caretz's own processes in /proc"
ALLOWED: dict[tuple[str, str, str], str] = {
    # -- no file: sessions, stores and a terminal answer named `open` ---------------------
    ("caretz/acp/agent.py", "AcpAgent._open", ".open"): "AcpSession.open: a session",
    ("caretz/ui/answer.py", "TerminalAnswer.write", ".open"): "the answer's own live view",
    ("caretz/tools/image_fit.py", "_resized", ".open"): "Pillow opening bytes in memory",
    # -- caretz's own data dir, config dir and runtime dirs ------------------------------
    ("caretz/session/store.py", "SessionStore.discard_unused", "shutil.rmtree"): DATA,
    ("caretz/schedule/commands.py", "add_job", ".touch"): DATA,
    ("caretz/schedule/commands.py", "run_job", ".touch"): DATA,
    ("caretz/ui/paste_input.py", "PrivateHistory.__init__", ".touch"): "private_data.touch: "
    + DATA,
    ("caretz/cli_options.py", "stdout_reader_gone", "os.open"): "/dev/null",
    ("caretz/tools/plan_exit.py", "ExitPlanModeTool.save", ".iterdir"): DATA,
    ("caretz/checkpoints/git.py", "ShadowGit.borrowed", ".read_text"): "the shadow repository",
    ("caretz/checkpoints/git.py", "ShadowGit._point_head", ".read_bytes"): "the shadow repository",
    ("caretz/checkpoints/seed.py", "_own_store_empty", ".glob"): "the shadow repository",
    ("caretz/checkpoints/seed.py", "_own_store_empty", ".iterdir"): "the shadow repository",
    ("caretz/mcp_client/tokens.py", "TokenStore.forget", ".unlink"): "the kept MCP logins",
    ("caretz/mcp_client/tokens.py", "TokenStore.load", "os.open"): "the kept MCP logins",
    ("caretz/checkpoints/git.py", "ShadowGit.repack_own", ".glob"): "the shadow repository",
    ("caretz/checkpoints/git.py", "ShadowGit.repack_own", ".unlink"): "the shadow repository",
    ("caretz/checkpoints/seed.py", "seed_index", "os.replace"): "the shadow repository",
    ("caretz/checkpoints/seed.py", "seed_index", ".unlink"): "the shadow repository",
    ("caretz/checkpoints/seed.py", "_copy_index", "os.utime"): "the shadow repository",
    ("caretz/approvals.py", "ApprovalStore._read", "os.open"): DATA,
    ("caretz/checkpoints/git.py", "ShadowGit.ensure_repo", ".glob"): "the shadow repository",
    ("caretz/checkpoints/git.py", "ShadowGit.ensure_repo", ".unlink"): "the shadow repository",
    ("caretz/checkpoints/restore.py", "TreeWriter.discard_trash", "shutil.rmtree"): (
        "a restore's trash in the data dir; rmtree goes by fds on Linux and follows no link"
    ),
    ("caretz/checkpoints/store.py", "CheckpointStore.compact", "shutil.rmtree"): DATA,
    ("caretz/checkpoints/store.py", "CheckpointStore.disk_usage", "os.walk"): DATA,
    ("caretz/eval/verdict_cache.py", "_read", ".read_text"): "the verdict cache",
    ("caretz/mcp_client/manager.py", "McpManager._errlog", "open"): "os.devnull",
    ("caretz/mcp_client/manager.py", "McpManager.last_stderr_line", ".read_text"): "its log",
    ("caretz/sandbox/runtime.py", "SessionRuntime._session_dir_locked", ".mkdir"): (
        "a new session dir in caretz's private runtime dir"
    ),
    ("caretz/sandbox/runtime.py", "SessionRuntime._session_dir_locked", "tempfile.mkdtemp"): (
        "a new session dir in caretz's private runtime dir"
    ),
    ("caretz/sandbox/runtime.py", "SessionRuntime.filter_file", "os.open"): "a seccomp filter",
    ("caretz/sandbox/runtime.py", "_remove_abandoned", "os.scandir"): "caretz's runtime dir",
    ("caretz/sandbox/runner.py", "Sandbox._bwrap_launch", "os.open"): "the seccomp filter",
    ("caretz/schedule/commands.py", "run_job", ".open"): "a job's log: " + DATA,
    ("caretz/session/events.py", "open_log", "os.open"): "the session log",
    ("caretz/session/events.py", "read_events", ".open"): "a session log",
    ("caretz/session/images.py", "ImageFiles.load", ".read_bytes"): "a session's images",
    ("caretz/session/store.py", "SessionStore.ids", ".iterdir"): "the sessions folder",
    ("caretz/acp/server.py", "protocol_pipes", "os.open"): "os.devnull",
    ("caretz/tools/output.py", "FullOutput._open", "tempfile.mkstemp"): (
        "a long output kept whole: a new file of caretz's own (0600) in the temp dir"
    ),
    ("caretz/providers/local.py", "LocalServers._start", "tempfile.TemporaryFile"): (
        "llama.cpp's stderr: an unnamed temporary file"
    ),
    # -- paths the user typed or configured (a flag, profiles.json) ------------------------
    (
        "caretz/integrations/harbor.py",
        "CaretzAgent._fill_context",
        ".read_text",
    ): "a Harbor trial's own logs folder on the host, never a project's",
    (
        "caretz/integrations/harbor.py",
        "CaretzAgent._fill_context",
        ".write_text",
    ): "a Harbor trial's own logs folder on the host, never a project's",
    (
        "caretz/integrations/harbor.py",
        "CaretzAgent._result",
        ".read_text",
    ): "a Harbor trial's own logs folder on the host, never a project's",
    (
        "caretz/integrations/harbor.py",
        "CaretzAgent._stderr",
        ".read_text",
    ): "a Harbor trial's own logs folder on the host, never a project's",
    ("caretz/integrations/harbor.py", "CaretzAgent.configure", ".read_text"): (
        "the profiles file the Harbor user names with the agent's `config` kwarg"
    ),
    ("caretz/config/loading.py", "read_json_file", ".read_text"): (
        "profiles.json: the user's own config file (--config, CARETZ_CONFIG or the default)"
    ),
    ("caretz/config/env_file.py", "read_env_file", "dotenv.dotenv_values"): (
        "--env-file: a file the user named, refused unless only its owner can read it"
    ),
    ("caretz/eval/labels.py", "load_labels", ".read_text"): "a labels file the user named",
    ("caretz/batch/tasks.py", "read_tasks", ".read_text"): "the tasks file `caretz batch` is given",
    ("caretz/batch/results.py", "ResultsFile.recorded", ".read_text"): (
        "the batch's results file (--results, or beside the tasks file the user named)"
    ),
    ("caretz/batch/results.py", "ResultsFile.append", "os.open"): (
        "the batch's results file, appended to, no symlink followed (O_NOFOLLOW)"
    ),
    ("caretz/eval/replay.py", "load_trajectories", ".read_text"): "a corpus the user named",
    ("caretz/providers/local_runner.py", "server_params", ".read_text"): (
        "the chat template a `local` section of profiles.json names"
    ),
    ("caretz/providers/local_runner.py", "main", "os.open"): "os.devnull",
    ("caretz/providers/local_spec.py", "_check_gguf", ".open"): (
        "the model file a `local` section of profiles.json names"
    ),
    # -- /proc and /sys of caretz's own processes, the kernel's own files -----------------
    ("caretz/sandbox/landlock.py", "_add_rule", "os.open"): (
        "an O_PATH fd for a Landlock rule: it opens nothing for reading"
    ),
    ("caretz/sandbox/landlock.py", "_descendants", "open"): PROC,
    ("caretz/sandbox/landlock.py", "_descendants", "os.listdir"): PROC,
    ("caretz/sandbox/landlock.py", "_last_capability", "open"): "/proc/sys/kernel/cap_last_cap",
    ("caretz/sandbox/landlock.py", "read_program", "open"): "the seccomp program caretz wrote",
    ("caretz/sandbox/landlock_rules.py", "readable_entries", "os.scandir"): (
        "the system's own folders (/, /usr, …) listed for the Landlock rules"
    ),
    ("caretz/sandbox/policy.py", "existing_paths", "glob.glob"): (
        "the sandbox's hidden and read-only entries (the user's and caretz's lists)"
    ),
    ("caretz/sandbox/reaper.py", "descendants", "open"): PROC,
    ("caretz/sandbox/reaper.py", "descendants", "os.listdir"): PROC,
    ("caretz/sandbox/runtime.py", "_open_namespaces", "os.open"): "a process's /proc/PID/ns",
    ("caretz/schedule/crontab.py", "_process_name", ".read_bytes"): "/proc: is cron running",
    ("caretz/schedule/crontab.py", "_process_name", ".read_text"): "/proc: is cron running",
    ("caretz/schedule/crontab.py", "cron_daemon_running", ".iterdir"): "/proc",
    ("caretz/tools/process.py", "_processes", "os.scandir"): PROC,
    ("caretz/tools/process.py", "_stat_fields", "open"): PROC,
    # -- in a project, but no content read and nothing followed --------------------------
    ("caretz/tools/search_results.py", "newest_first", "os.open"): (
        "a directory fd of grep's checked root, for fstatat (no symlink followed) of rg's results"
    ),
    ("caretz/sandbox/covers.py", "_remove_empty", ".rmdir"): (
        "an empty mount point bubblewrap made, once no sandboxed command is left to race it"
    ),
    ("caretz/checkpoints/watch.py", "TreeWatch._watch_below", "os.scandir"): (
        "the names of a project's folders, to set inotify watches: no content read, and a "
        "folder swapped for a link only adds a hint, whose paths git looks at unfollowed"
    ),
    ("caretz/checkpoints/watch.py", "file_system_type", ".read_text"): "/proc/self/mountinfo",
    ("caretz/checkpoints/watch.py", "watch_budget", ".read_text"): (
        "/proc/sys/fs/inotify/max_user_watches"
    ),
}


def file_calls(source: str, module: str) -> Iterator[tuple[str, str, str]]:
    """(module, the function holding it, the call) for each file call in `source`."""
    stack: list[str] = []

    class Visitor(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
            stack.append(node.name)
            self.generic_visit(node)
            stack.pop()

        visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

        def visit_ClassDef(self, node: ast.ClassDef) -> None:
            stack.append(node.name)
            self.generic_visit(node)
            stack.pop()

        def visit_Call(self, node: ast.Call) -> None:
            kind = call_kind(node)
            if kind is not None:
                found.append((module, ".".join(stack) or "<module>", kind))
            self.generic_visit(node)

    found: list[tuple[str, str, str]] = []
    Visitor().visit(ast.parse(source))
    yield from found


def call_kind(node: ast.Call) -> str | None:
    function = node.func
    if isinstance(function, ast.Name):
        return "open" if function.id == "open" else None
    if not isinstance(function, ast.Attribute):
        return None
    name, owner = function.attr, function.value
    if isinstance(owner, ast.Name) and owner.id == "os":
        return f"os.{name}" if name in OS_CALLS else None
    if isinstance(owner, ast.Name) and owner.id in MODULE_CALLS:
        names = MODULE_CALLS[owner.id]
        return f"{owner.id}.{name}" if names is None or name in names else None
    if isinstance(owner, ast.Name) and owner.id in NOT_FILES or name not in PATH_METHODS:
        return None
    if name in ("replace", "rename") and (len(node.args) != 1 or node.keywords):
        return None  # str.replace(old, new)
    if name == "open" and _names_a_class(owner):
        return None  # `Session.open(...)`, `CheckpointStore.open(...)`: a classmethod
    return f".{name}"


def _names_a_class(owner: ast.expr) -> bool:
    last = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return last[:1].isupper()


def scan() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE.parent).as_posix()
        if module not in DOOR and module != DATA_DOOR:
            found += file_calls(path.read_text(encoding="utf-8"), module)
    return found


def test_every_file_call_outside_the_door_is_listed_with_its_reason():
    unlisted = sorted({call for call in scan() if call not in ALLOWED})
    assert unlisted == [], (
        "a file call outside the door (caretz/sandbox/door.py, beneath.py, safe_open.py): "
        "read or write a project's file through it, or list the call in ALLOWED with why "
        "it is not a project's file"
    )


def test_no_listed_place_is_left_over():
    found = set(scan())
    assert sorted(set(ALLOWED) - found) == []


def test_the_scan_sees_each_way_of_reaching_a_file():
    source = """
import os, shutil, io, dotenv
from pathlib import Path

def reader(path):
    Path(path).read_text()
    open(path)
    path.open("rb")
    io.open(path)
    os.open(path, os.O_RDONLY)
    dotenv.dotenv_values(path)

class Writer:
    def write(self, path, other):
        path.write_bytes(b"")
        os.replace(path, other)
        path.rename(other)
        shutil.copy(path, other)
        shutil.rmtree(path)
        os.unlink(path)
        path.parent.mkdir()
        for _ in path.rglob("*.md"):
            pass

def not_files(text, session, thing):
    text.replace("a", "b")
    session.Session.open()
    dataclasses.replace(thing)
    shutil.which("git")
"""
    found = [(where, kind) for _, where, kind in file_calls(source, "m.py")]

    assert found == [
        ("reader", ".read_text"), ("reader", "open"), ("reader", ".open"),
        ("reader", "io.open"), ("reader", "os.open"), ("reader", "dotenv.dotenv_values"),
        ("Writer.write", ".write_bytes"), ("Writer.write", "os.replace"),
        ("Writer.write", ".rename"), ("Writer.write", "shutil.copy"),
        ("Writer.write", "shutil.rmtree"), ("Writer.write", "os.unlink"),
        ("Writer.write", ".mkdir"), ("Writer.write", ".rglob"),
    ]  # fmt: skip
