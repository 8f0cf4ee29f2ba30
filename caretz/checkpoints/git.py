"""The real `git`, run against a shadow git dir with the project as its work tree.

Every call gets a clean environment (no inherited GIT_* variables, no system or
global config, HOME inside the shadow folder) and the settings that matter on the
command line, so the project's own repository, its hooks and the user's git
config never take part, and nothing the shadow does can reach the project's `.git`.

A shadow started from the project's own index (checkpoints/seed.py) borrows the blobs
of files unchanged since: they stay in the project's object store, named in
`info/borrowed`. Only the calls that read a blob's bytes pass `borrow=True` and see that
store (as an alternate, read-only); every other call, the ones that write objects
included, sees the shadow's own objects alone, so what the shadow writes is its own.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from caretz import private_data
from caretz.checkpoints.errors import CheckpointError, GitNotFound
from caretz.trusted import Program, find_program, untrusted_roots

PRIVATE_UMASK = private_data.PRIVATE_UMASK

# Attributes that would make git change bytes on the way in or out (line endings,
# filters such as LFS, ident, encodings) are switched off for every path, so a
# snapshot holds the file's exact bytes.
ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
AUTHOR = ("caretz", "caretz@localhost")
# The shadow's HEAD: the commit of the tree its index held when last recorded (scan.py).
INDEX_REF = "refs/caretz/index"


def find_git(env: Mapping[str, str] | None = None, untrusted: Sequence[Path] = ()) -> Program:
    """The first `git` on PATH outside `untrusted` (the project, where commands write),
    or GitNotFound."""
    path = (env if env is not None else os.environ).get("PATH", "")
    return trusted_git(find_program("git", path, untrusted_roots(untrusted)))


def trusted_git(found: Program) -> Program:
    """`found`, or GitNotFound saying why there is no git caretz may run."""
    if found.path is None:
        raise GitNotFound(found.notice())
    return found


def _settings(git_dir: Path) -> list[str]:
    pairs = {
        "core.hooksPath": str(git_dir / "no-hooks"),
        "core.fsmonitor": "false",
        "core.autocrlf": "false",
        "core.safecrlf": "false",
        "core.eol": "lf",
        "core.symlinks": "true",
        "core.filemode": "true",
        "core.ignorecase": "false",
        "core.precomposeunicode": "false",
        "core.untrackedCache": "true",
        # The untracked cache serves `status -uall` only when this says `all` (scan.py).
        "status.showUntrackedFiles": "all",
        "core.preloadIndex": "true",
        "core.attributesFile": os.devnull,
        "core.excludesFile": os.devnull,
        "core.logAllRefUpdates": "false",
        "core.quotePath": "false",
        "index.version": "4",
        # Each write of the index (stat data brought up to date, files staged, trees
        # written) rewrites only the entries that changed since the shared part was made:
        # on the Linux source a file's stage or a tree's write costs half what rewriting
        # and hashing all 78,000 entries did. A shared part no index names is deleted a
        # day after its last use.
        "core.splitIndex": "true",
        "splitIndex.sharedIndexExpire": "1.day.ago",
        "gc.auto": "0",
        "maintenance.auto": "false",
        "commit.gpgSign": "false",
        "tag.gpgSign": "false",
        "user.name": AUTHOR[0],
        "user.email": AUTHOR[1],
        "advice.addEmbeddedRepo": "false",
    }
    return [arg for key, value in pairs.items() for arg in ("-c", f"{key}={value}")]


class ShadowGit:
    """A git dir of caretz's own (`git_dir`) over the project's working tree."""

    def __init__(self, git: str, git_dir: Path, work_tree: Path, path_env: str):
        self.git = git
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.index = git_dir / "caretz-index"
        self.borrowed_marker = git_dir / "info" / "borrowed"
        self._home = git_dir / "home"
        self._path_env = path_env
        self._settings = _settings(git_dir)

    @property
    def borrowed(self) -> Path | None:
        """The project's object store this shadow borrows blobs from, if it does."""
        try:
            text = self.borrowed_marker.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            return None
        return Path(text.strip()) if text.strip() else None

    def env(self, extra: Mapping[str, str] | None = None, borrow: bool = False) -> dict[str, str]:
        env = {
            "PATH": self._path_env,
            "HOME": str(self._home),
            "XDG_CONFIG_HOME": str(self._home / "config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.work_tree),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
            "GIT_AUTHOR_NAME": AUTHOR[0],
            "GIT_AUTHOR_EMAIL": AUTHOR[1],
            "GIT_COMMITTER_NAME": AUTHOR[0],
            "GIT_COMMITTER_EMAIL": AUTHOR[1],
        }
        if "TMPDIR" in os.environ:
            env["TMPDIR"] = os.environ["TMPDIR"]
        borrowed = self.borrowed if borrow else None
        if borrowed is not None:
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = _alternate(str(borrowed))
        return {**env, **(extra or {})}

    def command(self, args: Sequence[str], settings: Sequence[str] = ()) -> list[str]:
        return [self.git, *self._settings, *settings, *args]

    def call(
        self,
        *args: str,
        input: bytes | None = None,
        settings: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        borrow: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Runs git in the project directory; the caller reads the exit code. `borrow`:
        the project's object store is read too (see the module docstring)."""
        return subprocess.run(
            self.command(args, settings),
            input=input,
            capture_output=True,
            cwd=self.work_tree,
            env=self.env(env, borrow),
            umask=PRIVATE_UMASK,  # git's objects 0400 and its folders 0700 (private_data.py)
        )

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        settings: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        borrow: bool = False,
    ) -> bytes:
        """Runs git in the project directory and returns its stdout; a failure raises."""
        done = self.call(*args, input=input, settings=settings, env=env, borrow=borrow)
        if done.returncode != 0:
            raise CheckpointError(f"git {args[0]} failed: {last_line(done.stderr)}")
        return done.stdout

    def text(
        self,
        *args: str,
        input: bytes | None = None,
        settings: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        borrow: bool = False,
    ) -> str:
        found = self.run(*args, input=input, settings=settings, env=env, borrow=borrow)
        return os.fsdecode(found).strip()

    def ensure_repo(self) -> None:
        """Creates the shadow git dir on first use (refs and objects only, no work tree)."""
        if (self.git_dir / "HEAD").is_file():
            self._point_head()
            return
        private_data.make_dir(self.git_dir.parent)
        done = subprocess.run(
            [self.git, "init", "-q", "--bare", str(self.git_dir)],
            capture_output=True,
            cwd=self.git_dir.parent,
            env={k: v for k, v in self.env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")},
            umask=PRIVATE_UMASK,
        )
        if done.returncode != 0:
            raise CheckpointError(f"git init failed: {last_line(done.stderr)}")
        self.run("config", "core.bare", "false")
        private_data.write_file(self.git_dir / "info" / "attributes", ATTRIBUTES)
        private_data.make_dir(self._home)
        for sample in (self.git_dir / "hooks").glob("*.sample"):
            sample.unlink()
        self._point_head()

    def _point_head(self) -> None:
        """HEAD names INDEX_REF (a shadow made before it named a branch no one writes)."""
        try:
            head = (self.git_dir / "HEAD").read_bytes()
        except OSError:
            head = b""
        if head.strip() != f"ref: {INDEX_REF}".encode():
            self.run("symbolic-ref", "HEAD", INDEX_REF)

    def repack_own(self) -> None:
        """Packs the shadow's own objects that are kept into one pack and drops the rest.

        Not `git repack`: it would either copy every borrowed blob in (with the borrowed
        store) or stop at the first one it cannot find (without). This passes over them."""
        packs = self.git_dir / "objects" / "pack"
        before = {path.name for path in packs.glob("pack-*")}
        kept = self.text(
            "pack-objects",
            "--all",
            "--reflog",
            "--indexed-objects",
            "--missing=allow-any",
            "--non-empty",
            "-q",
            str(packs / "pack"),
            input=b"",
        )
        if kept:
            for name in before - {p.name for p in packs.glob(f"pack-{kept}.*")}:
                (packs / name).unlink(missing_ok=True)
        self.run("prune-packed")
        self.run("prune", "--expire=now")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One caretz process at a time works on this shadow repository."""
        with os.fdopen(private_data.append_to(self.git_dir.parent / "lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _alternate(path: str) -> str:
    """One entry of git's colon-separated list of object stores (quoted as git reads it
    when the path holds a colon or starts with a quote)."""
    if ":" not in path and not path.startswith('"'):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def last_line(stderr: bytes) -> str:
    lines = [line for line in os.fsdecode(stderr).splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no message"
