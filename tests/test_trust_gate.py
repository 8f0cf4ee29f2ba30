"""A project's configuration reaches a session only through its gate
(caretz/runtime/project_trust.py): the functions that read a project's settings file, its
`.mcp.json`, its hooks section, its command files, its agent files and its skills, and the
approvals that decide what of them is used, are named nowhere else in caretz/ (besides the
modules that define them). New code that reads project configuration on its own fails here.

A name counts wherever a module binds it to its home: `from home import name`, an
attribute of the home module imported (`import home as x`, `from package import home`)
or declared lazily (`x = lazy_module("home")`), called or only passed along.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import caretz
from tests.source_trees import parsed

GATE = "caretz.runtime.project_trust"
READERS = {
    ("caretz.permissions.project", "read_project_settings"),
    ("caretz.config.mcp_servers", "project_servers"),
    ("caretz.slash_commands.files", "load_catalog"),
    ("caretz.slash_commands.files", "command_files"),
    ("caretz.slash_commands.files", "read_command"),
    ("caretz.agent_files.folders", "load_agents"),
    ("caretz.agent_files.folders", "read_agent"),
    ("caretz.skills.files", "load_skills"),
    ("caretz.skills.files", "skill_files"),
    ("caretz.skills.files", "read_skill"),
    ("caretz.runtime.hooks", "project_hooks_section"),
    ("caretz.hooks.approvals", "HookApprovals"),
    ("caretz.mcp_client.approvals", "Approvals"),
    ("caretz.approvals", "ApprovalStore"),
    ("caretz.config.mcp_servers", "servers_of"),
    ("caretz.runtime.plugins", "enabled_plugins"),
    ("caretz.runtime.plugins", "read_plugin"),
}
# Who else may name one, and why.
ALSO_ALLOWED = {
    # "yes, always" rewrites the settings file keeping its other keys; the gate calls it.
    ("caretz.permissions.proposals", "read_project_settings"),
    # The stores of the parts approved on their own (`caretz hooks/mcp approve`).
    ("caretz.hooks.approvals", "ApprovalStore"),
    ("caretz.mcp_client.approvals", "ApprovalStore"),
    # An installed plugin's `.mcp.json`, read by the plugins' reader the gate calls.
    ("caretz.runtime.plugins", "servers_of"),
    # `caretz plugin install/list`: an installed copy checked and counted; nothing runs.
    ("caretz.commands.plugins", "read_plugin"),
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def homes(tree: ast.Module, known: set[str]) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(local name → the module it is, local name → (module, name) it was imported as)."""
    modules: dict[str, str] = {}
    names: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                local = alias.asname or alias.name
                if full in known:
                    modules[local] = full
                else:
                    names[local] = (node.module, alias.name)
        elif isinstance(node, ast.Assign) and _lazy_target(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    modules[target.id] = _lazy_target(node.value) or ""
    return modules, names


def _lazy_target(value: ast.expr) -> str | None:
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "lazy_module"
        and value.args
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
    ):
        return value.args[0].value
    return None


def named_readers(path: Path, name: str, known: set[str]) -> Iterator[str]:
    """Each reader `path` (module `name`) names, as `file:line: home.reader`."""
    tree = parsed(path)
    modules, names = homes(tree, known)
    for node in ast.walk(tree):
        found = None
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (node.module, alias.name) in READERS:
                    found = (node.module, alias.name)
        elif isinstance(node, ast.Name) and node.id in names:
            found = names[node.id]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            home = modules.get(node.value.id)
            found = (home, node.attr) if home else None
        if found in READERS and found[0] != name and (name, found[1]) not in ALSO_ALLOWED:
            yield f"{path.name}:{node.lineno}: {found[0]}.{found[1]}"


def readers_outside_the_gate(root: Path) -> list[str]:
    paths = sorted(root.rglob("*.py"))
    known = {module_name(path, root) for path in paths}
    return sorted(
        f"{module_name(path, root)}: {hit}"
        for path in paths
        if module_name(path, root) != GATE
        for hit in set(named_readers(path, module_name(path, root), known))
    )


def test_project_configuration_is_read_only_through_the_gate():
    assert readers_outside_the_gate(Path(caretz.__file__).parent) == []


def test_the_checker_sees_each_way_of_naming_a_reader(tmp_path: Path):
    root = tmp_path / "caretz"
    (root / "permissions").mkdir(parents=True)
    (root / "ui").mkdir()
    for path in (root / "__init__.py", root / "permissions" / "__init__.py"):
        path.write_text("")
    (root / "permissions" / "project.py").write_text("def read_project_settings(root): ...\n")
    (root / "ui" / "direct.py").write_text(
        "from caretz.permissions.project import read_project_settings as read\nread('.')\n"
    )
    (root / "ui" / "module.py").write_text(
        "from caretz.permissions import project\nsettings = project.read_project_settings\n"
    )
    (root / "ui" / "lazy.py").write_text(
        'from caretz.lazy import lazy_module\nhere = lazy_module("caretz.permissions.project")\n'
        "def f(): return here.read_project_settings('.')\n"
    )
    (root / "ui" / "innocent.py").write_text("config = {}\nconfig.project_servers = 1\n")

    found = readers_outside_the_gate(root)

    assert [hit.split(":")[0] for hit in found] == [
        "caretz.ui.direct",
        "caretz.ui.direct",
        "caretz.ui.lazy",
        "caretz.ui.module",
    ]
