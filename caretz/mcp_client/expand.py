"""`${VAR}` and `${VAR:-default}` in a server entry's strings, as Claude Code expands them.

Only the braced forms expand (a bare `$VAR` stays as written, so a `$` in an argument
is safe). A variable that is not set, with no default, is an error naming it: the
server does not start, rather than start with the text `${API_KEY}` as its key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingVariable(ValueError):
    """A `${VAR}` whose variable is not set and has no default."""

    def __init__(self, name: str, where: str):
        super().__init__(
            f"{where} uses ${{{name}}}, which is not set (set it, or write ${{{name}:-default}})"
        )
        self.name = name


def expand(text: str, env: Mapping[str, str], where: str) -> str:
    """`text` with each `${VAR}` replaced; raises MissingVariable naming `where`."""

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = env.get(name)
        if found is not None and (found != "" or default is None):
            return found
        if default is not None:
            return default
        raise MissingVariable(name, where)

    return _REFERENCE.sub(value, text)


def expand_all(values: Mapping[str, str], env: Mapping[str, str], where: str) -> dict[str, str]:
    """Each value of a mapping (`env`, `headers`) expanded; `where.KEY` names a missing one."""
    return {key: expand(value, env, f"{where}.{key}") for key, value in values.items()}


def references(text: str) -> list[tuple[str, str | None]]:
    """Each `${VAR}` or `${VAR:-default}` in `text`: (name, default or None), in order."""
    return [(match.group(1), match.group(2)) for match in _REFERENCE.finditer(text)]
