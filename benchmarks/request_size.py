"""The size of a session's first request before any message: the system prompt and the
tool specs, as the Anthropic wire protocol sends them (name, description, input_schema).

Prints characters and estimated tokens (characters / 4, the usual rule of thumb for
English and JSON) for each permission mode, in an empty git repository with no
AGENTS.md. Goal: under 4k tokens for prompt + tools in every mode.

    .venv/bin/python benchmarks/request_size.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_TOKENS = 4000
CHARS_PER_TOKEN = 4


def tool_specs_json(specs: list) -> str:
    wire = [
        {"name": s.name, "description": s.description, "input_schema": s.parameters} for s in specs
    ]
    return json.dumps(wire, separators=(",", ":"))


def sizes(workspace: Path) -> dict[str, tuple[int, int]]:
    """Per mode: (system prompt characters, tool specs characters)."""
    from caretz.agent import prompts

    found: dict[str, tuple[int, int]] = {}
    environment = getattr(prompts, "SessionEnvironment", None)
    if environment is None:  # before the prompt knew its environment: one prompt for all
        from caretz.tools.registry import default_tools

        system = prompts.system_prompt(workspace)
        specs = tool_specs_json([tool.spec for tool in default_tools()])
        return {"every mode": (len(system), len(specs))}
    from caretz.tools.registry import ToolRegistry, default_tools, withheld_effects

    roots = (workspace,)
    for mode, backend, writable in (
        ("auto", "bwrap", roots),
        ("read-only", "bwrap", ()),
        ("yolo", "none", roots),
    ):
        env = environment(permission_mode=mode, backend=backend, writable=writable)
        system = prompts.system_prompt(workspace, environment=env)
        sandboxed = backend != "none"
        registry = ToolRegistry(default_tools(sandboxed=sandboxed), withheld=withheld_effects(mode))
        found[mode] = (len(system), len(tool_specs_json(registry.specs())))
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
        measured = sizes(workspace)
    print(f"{'mode':<12}{'system':>9}{'tools':>9}{'total chars':>13}{'~tokens':>9}")
    worst = 0
    for mode, (system, tools) in measured.items():
        tokens = (system + tools) // CHARS_PER_TOKEN
        worst = max(worst, tokens)
        print(f"{mode:<12}{system:>9,}{tools:>9,}{system + tools:>13,}{tokens:>9,}")
    verdict = "met" if worst < GOAL_TOKENS else "NOT met"
    print(f"goal: under {GOAL_TOKENS:,} tokens for prompt + tools: {verdict}")


if __name__ == "__main__":
    main()
