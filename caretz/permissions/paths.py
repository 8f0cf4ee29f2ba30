"""Path globs in rules (`Read(./.env*)`, `Edit(src/**)`), gitignore-style.

Where a pattern is anchored:
- `./x`, or any pattern with a slash before its end (`src/**`): the project root;
- `~/x`: the home directory; `//x` and `/x`: the filesystem root;
- a bare name or glob (`.env`, `*.pem`): any directory, at any depth.

`**` spans directories, `*` and `?` stay within one name, `[…]` is a class, `{a,b}`
lists alternatives, `\\` escapes. As in .gitignore, a pattern that matches a directory
matches everything inside it. In the disallowedTools conversion `LegacyGlob` keeps
the loop guard's older meaning (`*` crosses `/`; the full path, the name or a suffix).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from enum import Enum

from caretz.lazy_dataclass import lazy_dataclass


class Anchor(Enum):
    ROOT = "project root"
    HOME = "home"
    ABSOLUTE = "filesystem root"
    ANYWHERE = "any directory"


@lazy_dataclass(frozen=True)
class PathFacts:
    """A path a tool call would touch, in the forms rules compare."""

    given: str  # made absolute from the working directory, `~` expanded, `..` folded
    real: str  # with symlinks resolved: where the bytes are
    root: str  # the project root
    home: str

    @classmethod
    def of(cls, raw: str, cwd: str, root: str, home: str) -> PathFacts:
        expanded = home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
        absolute = posixpath.normpath(posixpath.join(cwd, expanded))
        return cls(absolute, os.path.realpath(absolute), posixpath.normpath(root), home)

    def candidates(self) -> tuple[str, ...]:
        return (self.given,) if self.real == self.given else (self.given, self.real)


class PathGlob:
    def __init__(self, text: str, anchors: tuple[Anchor, ...], body: str):
        self.text = text
        self.anchors = anchors
        self.regex = glob_to_regex(body)

    @classmethod
    def parse(cls, text: str, for_allow: bool) -> PathGlob:
        """A rule's path pattern. Raises ValueError saying what is wrong."""
        spec = text.strip()
        if not spec:
            raise ValueError("the path pattern is empty")
        if spec.startswith("//"):
            return cls(text, (Anchor.ABSOLUTE,), spec[2:].rstrip("/") or "**")
        if spec.startswith("/"):
            # Claude Code reads `/x` as relative to the settings file (here: the project
            # root); caretz reads it as absolute. Deny and ask rules cover both readings.
            anchors = (Anchor.ABSOLUTE,) if for_allow else (Anchor.ABSOLUTE, Anchor.ROOT)
            return cls(text, anchors, spec[1:].rstrip("/") or "**")
        if spec == "~" or spec.startswith("~/"):
            return cls(text, (Anchor.HOME,), spec[2:].rstrip("/") or "**")
        if spec.startswith("~"):
            raise ValueError(f"{spec!r}: only ~/ (your own home) is understood")
        body = spec[2:] if spec.startswith("./") else spec
        body = body.rstrip("/") or "**"
        anchored = spec.startswith("./") or "/" in body
        return cls(text, (Anchor.ROOT,) if anchored else (Anchor.ANYWHERE,), body)

    def matches(self, path: str, facts: PathFacts, inside_root_only: bool) -> bool:
        """Whether `path` (absolute, normalized) or a directory above it matches."""
        for anchor in self.anchors:
            if anchor is Anchor.ANYWHERE:
                base = facts.root if inside_root_only else "/"
                relative = _relative(path, base)
                if relative is not None and self._any_tail(relative):
                    return True
                continue
            base = {Anchor.ROOT: facts.root, Anchor.HOME: facts.home, Anchor.ABSOLUTE: "/"}[anchor]
            relative = _relative(path, base)
            if relative is not None and self._self_or_parent(relative):
                return True
        return False

    def _self_or_parent(self, relative: str) -> bool:
        parts = relative.split("/")
        return any(self.regex.match("/".join(parts[:end])) for end in range(len(parts), 0, -1))

    def _any_tail(self, relative: str) -> bool:
        parts = relative.split("/")
        return any(self._self_or_parent("/".join(parts[start:])) for start in range(len(parts)))


def _relative(path: str, base: str) -> str | None:
    if base == "/":
        return path.lstrip("/") or None
    if path == base:
        return None
    prefix = base.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A glob over POSIX relative paths as a regex: `**` spans directories, `*` and `?`
    stay within one, `[…]` (`[!…]`, `[^…]`) is a class, `{a,b}` lists alternatives,
    `\\` escapes. The file tools' glob and grep use it too."""
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif char == "*":
            out.append(r"[^/]*")
            i += 1
        elif char == "?":
            out.append(r"[^/]")
            i += 1
        elif char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negated = body.startswith(("!", "^"))
            body = body[1:] if negated else body
            out.append("[" + ("^" if negated else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif char == "{" and (end := pattern.find("}", i)) != -1:
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_translate(option) for option in options) + ")")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


class LegacyGlob:
    """A `disallowedTools` file pattern: fnmatch over the full path, the name or a suffix.

    Compared with the path as the tool was given it, made absolute, relative to the
    project root and with symlinks resolved, so that no spelling of the path escapes it.
    """

    def __init__(self, text: str):
        self.text = text

    def matches_any(self, raw: str, facts: PathFacts) -> bool:
        forms = {posixpath.normpath(raw), *facts.candidates()}
        for candidate in facts.candidates():
            relative = _relative(candidate, facts.root)
            if relative is not None:
                forms.add(relative)
        return any(self._matches(form) for form in forms)

    def _matches(self, path: str) -> bool:
        pattern = self.text
        return (
            fnmatch.fnmatchcase(path, pattern)
            or fnmatch.fnmatchcase(posixpath.basename(path), pattern)
            or fnmatch.fnmatchcase(path, f"*/{pattern}")
        )
