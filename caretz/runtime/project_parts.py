"""The parts of a project's configuration that widen what caretz does and are read from
its command files and skills, as the project's gate (runtime/project_trust.py) keeps them
for approval."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ProjectCommand:
    """A project command file that widens: the shell lines it runs, the tools it grants."""

    name: str
    path: str  # below the project root
    shell: tuple[str, ...]
    allowed_tools: tuple[str, ...]

    def data(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "shell": list(self.shell),
            "allowedTools": list(self.allowed_tools),
        }


@dataclass(frozen=True)
class ProjectSkill:
    """A project's skill that widens: the tools it grants while it runs."""

    name: str
    path: str  # below the project root
    allowed_tools: tuple[str, ...]

    def data(self) -> dict[str, Any]:
        return {"path": self.path, "allowedTools": list(self.allowed_tools)}
