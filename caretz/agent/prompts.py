"""The system prompt: caretz's instructions, the environment, and project instructions."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

BASE_INSTRUCTIONS = """\
You are caretz, a coding agent working in the user's terminal, in their project.
You act through tools: bash runs shell commands in the workspace; read, write and edit work on \
files; glob and grep find files and text; todo keeps your plan for work of several steps.

How to work:
- Understand before changing: look at the relevant files and how the project is built and tested.
- Make focused changes that do what was asked; follow the project's existing style.
- Check your work: run the relevant tests or commands, and read their output carefully.
- When something fails, read the error and change your approach instead of repeating the same step.
- Prefer edit for changing existing files; use write for new files.
- Never print, copy or commit secrets such as API keys.
- When you are done, answer briefly: what you changed, how you checked it, and anything left open.
"""

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")


def project_instructions(workspace: Path) -> list[tuple[Path, str]]:
    """AGENTS.md (or CLAUDE.md where a folder has no AGENTS.md), from the repo root down.

    Like Codex, a deeper file comes later, so it can refine the ones above it.
    """
    workspace = workspace.resolve()
    folders = [workspace]
    for parent in workspace.parents:
        folders.append(parent)
        if (parent / ".git").exists():
            break
    else:
        if not (workspace / ".git").exists():
            folders = [workspace]  # no repo: only the workspace itself
    found = []
    for folder in reversed(folders):
        for name in INSTRUCTION_FILES:
            path = folder / name
            if path.is_file():
                found.append((path, path.read_text(encoding="utf-8", errors="replace")))
                break
    return found


def system_prompt(workspace: Path, extra: str | None = None) -> str:
    parts = [
        BASE_INSTRUCTIONS,
        "Environment:\n"
        f"- working directory: {workspace.resolve()}\n"
        f"- platform: {platform.system()} {platform.release()}\n"
        f"- date: {date.today().isoformat()}",
    ]
    for path, text in project_instructions(workspace):
        parts.append(f"Project instructions from {path}:\n{text.strip()}")
    if extra:
        parts.append(extra.strip())
    return "\n\n".join(parts) + "\n"
