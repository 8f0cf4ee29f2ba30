"""The package's shape, as docs/architecture.md draws it: no import cycles, no module over
450 lines, and each package importing only what the table there allows.

Imports inside functions and lazy ones (`lazy_module("caretz.x")`, declared at a module's
top) count; imports under `if TYPE_CHECKING:` do not, since they never run.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import re
import sys
from pathlib import Path

import pytest

import caretz
from tests.source_trees import parsed

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "code_shape.py"
PACKAGE_ROOT = Path(caretz.__file__).resolve().parent
MAX_LINES = 450

LEAVES = {
    "caretz",
    "caretz.messages",
    "caretz.text",
    "caretz.config_base",
    "caretz.config_section",  # the sections' pydantic base, apart so ConfigError needs none
    "caretz.lazy_dataclass",  # dataclasses made on first use (the hot path's)
    "caretz.secrets",
    "caretz.secret_shapes",  # the table's shapes, apart from its names and its redaction
    "caretz.secret_detector",  # detect-secrets beside the table, imported when a text is judged
    "caretz.addresses",  # whether an address is public: the network proxy's and web_fetch's
    "caretz.plan",
    "caretz.approvals",
    "caretz.trusted",  # which bwrap, git and interpreter caretz runs: sandbox and checkpoints
    "caretz.lazy",  # lazy_module: an import declared at the top, run at first use
    "caretz.inbound",  # data from outside read one way: models, servers, MCP, pages, hooks
    "caretz.private_data",  # the data dir's folders 0700 and files 0600, whatever the umask
}
# What each package may import besides the leaves, lowest layer first.
MAY_IMPORT: dict[str, set[str]] = {
    **{leaf: set() for leaf in LEAVES},
    "caretz.usage_error": set(),
    "caretz.cli_options": set(),  # Typer's options read without pydantic
    "caretz.session": set(),
    "caretz.providers": set(),
    "caretz.pricing": set(),
    "caretz.worktrees": {"caretz.sandbox"},  # the trusted git; info/exclude via the door
    "caretz.sandbox": set(),
    # The door (sandbox/door.py, sandbox/beneath.py): the project files caretz reads and
    # writes itself (settings, command files, a rewind's restores) go through it.
    "caretz.checkpoints": {"caretz.sandbox"},
    "caretz.permissions": {"caretz.sandbox"},
    "caretz.tools": {"caretz.permissions", "caretz.sandbox"},
    "caretz.slash_commands": {"caretz.sandbox"},
    # Agent files: read through the door; a front matter YAML refuses, as command files are.
    "caretz.agent_files": {"caretz.sandbox", "caretz.slash_commands"},
    # SKILL.md files read through the door, their front matter as a command file's; the
    # `skill` tool is a tool.
    "caretz.skills": {"caretz.sandbox", "caretz.slash_commands", "caretz.tools"},
    # Installed plugins: their files read and copied through the door, cloned by the
    # trusted git.
    "caretz.plugins": {"caretz.sandbox", "caretz.worktrees"},
    "caretz.hooks": {"caretz.tools"},  # the registry's seam, and ending a process group
    "caretz.mcp_client": {"caretz.tools", "caretz.sandbox"},  # its tools; the launcher
    "caretz.web": {"caretz.tools", "caretz.permissions"},  # its tools; the domain rules
    "caretz.guard": {"caretz.tools"},  # tools.policy's argument conventions only
    "caretz.goal": {"caretz.guard"},  # the guard's record, summary sections and reply readers
    "caretz.agent": {
        "caretz.goal",
        "caretz.guard",
        "caretz.providers",
        "caretz.session",
        "caretz.tools",
        "caretz.checkpoints",
        "caretz.agent_files",  # a named subagent's definition, plain data
    },
    # OpenTelemetry export: the session's records in, spans and metrics out; the judge priced.
    "caretz.telemetry": {"caretz.session", "caretz.pricing"},
    "caretz.config": {
        "caretz.goal",
        "caretz.guard",
        "caretz.hooks",
        "caretz.providers",
        "caretz.pricing",
        "caretz.permissions",
        "caretz.sandbox",
        "caretz.mcp_client",
        "caretz.web",
    },
}
WIRING = {
    "caretz.agent",
    "caretz.agent_files",
    "caretz.checkpoints",
    "caretz.config",
    "caretz.goal",
    "caretz.guard",
    "caretz.hooks",
    "caretz.mcp_client",
    "caretz.permissions",
    "caretz.plugins",
    "caretz.pricing",
    "caretz.providers",
    "caretz.sandbox",
    "caretz.session",
    "caretz.slash_commands",
    "caretz.skills",
    "caretz.tools",
    "caretz.usage_error",
    "caretz.web",
}
# caretz's worktrees: a named subagent's `isolation: worktree` (runtime/subagents.py).
MAY_IMPORT["caretz.runtime"] = WIRING | {"caretz.worktrees"}
# The application layer: what a session does, for every front end; it imports none.
MAY_IMPORT["caretz.app"] = WIRING | {"caretz.runtime", "caretz.telemetry"}
MAY_IMPORT["caretz.eval"] = WIRING | {"caretz.runtime"}
MAY_IMPORT["caretz.ui"] = WIRING | {"caretz.runtime", "caretz.app"}
# The Python API drives the application session; it imports no front end.
MAY_IMPORT["caretz.api"] = WIRING | {"caretz.app"}
MAY_IMPORT["caretz.commands"] = WIRING | {
    "caretz.worktrees",  # --worktree, caretz worktree list / remove
    "caretz.cli_options",  # what the command line's words mean (-r without an ID)
    "caretz.runtime",
    "caretz.ui",
    "caretz.app",
    "caretz.api",
}
MAY_IMPORT["caretz.schedule"] = {"caretz.config", "caretz.session", "caretz.usage_error"}
# caretz batch: each task a caretz process in a worktree; its runs' settings checked first.
MAY_IMPORT["caretz.batch"] = {
    "caretz.agent",  # agent/signals.py's is_ignored: an inherited ignore is kept
    "caretz.config",
    "caretz.providers",
    "caretz.usage_error",
    "caretz.worktrees",
}
# The ACP agent drives the application layer (caretz.app) and reads what it may read.
MAY_IMPORT["caretz.acp"] = WIRING | {"caretz.runtime", "caretz.app"}
MAY_IMPORT["caretz.cli"] = {
    "caretz.acp",
    "caretz.batch",
    "caretz.cli_options",
    "caretz.commands",
    "caretz.config",
    "caretz.eval",
    "caretz.schedule",
}
MAY_IMPORT["caretz.__main__"] = {"caretz.cli"}
# caretz inside other harnesses (Harbor): it reads a headless run's output and the providers'
# variable names; nothing in caretz imports it (test below), a harness loads it by its path.
MAY_IMPORT["caretz.integrations"] = {"caretz.providers"}


# The session log's records are a leaf like messages.py: any package writes or reads events.
RECORDS = "caretz.session.records"


def without_records(modules):
    """The modules, their imports of the records left out (the records' own rule is below)."""
    return {
        name: dataclasses.replace(
            module, imports={target for target in module.imports if not is_record(target)}
        )
        for name, module in modules.items()
    }


def is_record(name: str) -> bool:
    return name == RECORDS or name.startswith(RECORDS + ".")


@pytest.fixture(scope="module")
def shape():
    spec = importlib.util.spec_from_file_location("code_shape", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["code_shape"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def modules(shape):
    return shape.read_package()


def test_no_module_imports_another_that_imports_it_back(shape, modules):
    assert shape.cycles(modules) == []


def test_no_package_imports_another_that_imports_it_back(shape, modules):
    assert shape.cycles(shape.package_graph(modules)) == []


def test_no_module_is_over_450_lines(modules):
    over = {name: module.lines for name, module in modules.items() if module.lines > MAX_LINES}
    assert over == {}


def test_every_package_imports_only_what_the_architecture_allows(shape, modules):
    packages = shape.package_graph(without_records(modules))
    unknown = set(packages) - set(MAY_IMPORT)
    assert unknown == set(), "add new packages to MAY_IMPORT and docs/architecture.md"
    breaches = {
        name: sorted(package.imports - MAY_IMPORT[name] - LEAVES)
        for name, package in packages.items()
        if package.imports - MAY_IMPORT[name] - LEAVES
    }
    assert breaches == {}


def test_nothing_in_caretz_imports_the_integrations_and_only_they_import_harbor(modules):
    """Harbor's agent is loaded by Harbor, by its path: no caretz module imports it, so a
    run never loads Harbor; and Harbor's packages are imported in that one module."""
    integrations = "caretz.integrations"
    importers = sorted(
        name
        for name, module in modules.items()
        if not name.startswith(integrations)
        and any(t == integrations or t.startswith(integrations + ".") for t in module.imports)
    )
    assert importers == []
    harbor_users = sorted(
        path.relative_to(PACKAGE_ROOT).as_posix()
        for path in PACKAGE_ROOT.rglob("*.py")
        if re.search(r"^\s*(from|import) harbor\b", path.read_text(), re.MULTILINE)
    )
    assert harbor_users == ["integrations/harbor.py"]


def test_the_records_import_nothing_but_each_other(modules):
    records = {name: module for name, module in modules.items() if is_record(name)}
    assert records, "the records moved: update RECORDS"
    outside = {
        name: sorted(target for target in module.imports if not is_record(target))
        for name, module in records.items()
        if any(not is_record(target) for target in module.imports)
    }
    assert outside == {}


def test_event_type_names_are_spelled_only_in_the_records():
    """Writers and readers use the record classes: no `"Tool.Result"` literal elsewhere,
    nor a family's prefix (`"LoopGuard."`), so a renamed or new event cannot slip past."""
    from caretz.session.records.parse import RECORD_TYPES

    families = sorted({name.split(".")[0] for name in RECORD_TYPES})
    prefixes = "|".join(families)
    literal = re.compile(rf"""["']([A-Z][A-Za-z]+\.[A-Z][A-Za-z]+|(?:{prefixes})\.)["']""")
    package = Path(caretz.__file__).parent
    records = package / "session" / "records"
    found = {
        f"{path.relative_to(package)}:{number}: {match.group(0)}"
        for path in package.rglob("*.py")
        if records not in path.parents
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in literal.finditer(line)
    }
    assert found == set()


def test_the_checker_sees_imports_inside_functions(shape, tmp_path):
    root = tmp_path / "caretz"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("def f():\n    from caretz import b\n")
    (root / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from caretz import c\n"
        "import caretz.a\n"
    )
    (root / "c.py").write_text("import caretz.b\n")
    found = shape.read_package(root)
    assert shape.cycles(found) == [["caretz.a", "caretz.b"]]


def test_the_checker_sees_lazy_declarations(shape, tmp_path):
    root = tmp_path / "caretz"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text('from caretz.lazy import lazy_module\nb = lazy_module("caretz.b")\n')
    (root / "b.py").write_text("import caretz.a\n")
    (root / "lazy.py").write_text("")
    found = shape.read_package(root)
    assert shape.cycles(found) == [["caretz.a", "caretz.b"]]
    assert found["caretz.a"].eager == {"caretz.lazy"}  # importing a does not import b


# Function-level imports are kept only where neither a top-level import nor a lazy_module
# declaration works, each saying why on its line or the line above. The bound is 60;
# the package holds far fewer, and this keeps it from drifting back.
MAX_FUNCTION_IMPORTS = 10


def test_function_level_imports_are_few_and_each_says_why(shape):
    found = shape.function_imports()
    assert len(found) <= MAX_FUNCTION_IMPORTS, [
        f"{item.path.name}:{item.line}: {item.source}" for item in found
    ]
    silent = [f"{item.path.name}:{item.line}: {item.source}" for item in found if not item.comment]
    assert silent == []


def test_each_lazy_declaration_names_a_module_and_says_why(shape, modules):
    declared = shape.lazy_declarations()
    assert declared, "no lazy_module declaration found: has caretz.lazy moved?"
    unknown = [
        f"{item.path.name}:{item.line}: {item.source}"
        for item in declared
        if item.source not in modules
        and (item.source.startswith("caretz") or importlib.util.find_spec(item.source) is None)
    ]
    assert unknown == []
    silent = [
        f"{item.path.name}:{item.line}: {item.source}" for item in declared if not item.comment
    ]
    assert silent == []


def test_no_module_takes_config_error_from_a_module_that_loads_pydantic(shape, modules):
    """ConfigError is how every part reports bad input; taking it must not cost pydantic."""
    sources = shape.sources_of("ConfigError")
    assert sources, "nothing imports ConfigError: has it moved?"
    heavy = {
        f"{importer} from {source}"
        for importer, source in sources
        if "pydantic" in shape.loaded_with(source, modules)
        or "pydantic_settings" in shape.loaded_with(source, modules)
    }
    assert heavy == set()


def test_the_checker_follows_what_importing_a_module_loads(shape, tmp_path):
    root = tmp_path / "caretz"
    (root / "config").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "config" / "__init__.py").write_text("import pydantic\n")
    (root / "config" / "errors.py").write_text("class ConfigError(Exception): ...\n")
    (root / "leaf.py").write_text("def f():\n    import pydantic\nclass ConfigError: ...\n")
    (root / "user.py").write_text(
        "from caretz.config.errors import ConfigError\nfrom caretz.leaf import ConfigError\n"
    )
    found = shape.read_package(root)
    assert shape.sources_of("ConfigError", root) == {
        ("caretz.user", "caretz.config.errors"),
        ("caretz.user", "caretz.leaf"),
    }
    assert "pydantic" in shape.loaded_with("caretz.config.errors", found)
    assert "pydantic" not in shape.loaded_with("caretz.leaf", found)


# A session is assembled in small steps: check everything, then build each part with its
# collaborators. No step of it grows back into one long function.
ASSEMBLY_MODULES = ("app/assembly.py", "app/switching.py", "runtime/wiring.py", "app/session.py")
MAX_ASSEMBLY_LINES = 40


def test_the_functions_that_assemble_a_session_are_short():
    package = Path(caretz.__file__).parent
    long = [
        f"{name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for name in ASSEMBLY_MODULES
        for node in ast.walk(parsed(package / name))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_ASSEMBLY_LINES
    ]
    assert long == []


# The file tools decode and encode a file's bytes in one module, tools/file_text.py, which
# decides its encoding (a mark, a declaration, UTF-8, the detector) and keeps it on write.
# Every module of caretz/tools/ and every other module that opens a project file through
# the file tools' opener may not decode or encode text itself, except these, which never
# touch a project file's text:
CODEC_OWNER = "tools/file_text.py"
OTHER_TEXT = {
    "tools/output.py": "a command's output pipe, and the file its whole output is kept in",
    "tools/ripgrep.py": "rg's own error messages",
    "tools/workdir.py": "the shell's report of its working directory",
    "checkpoints/restore.py": "git's own output and object names, never a file's text",
    "sandbox/door.py": "caretz's own configuration files (settings, commands), UTF-8 as specified",
}
_CODEC_CALLS = {"decode", "encode", "read_text", "write_text", "getincrementaldecoder"}


def _file_text_modules() -> list[Path]:
    package = Path(caretz.__file__).parent
    openers = ("caretz.tools.file_access", "caretz.sandbox.safe_open", "caretz.tools.file_text")
    found = set((package / "tools").glob("*.py"))
    for path in package.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if (
            any(name in source for name in openers)
            or "from caretz.sandbox import safe_open" in source
        ):
            found.add(path)
    return sorted(found)


def _codec_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """Decoding and encoding that is not file_text's: `.decode(` and the like on anything
    but `file_text` or a decoder it made, and `encoding=` arguments."""
    made = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _is_file_text_call(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    uses = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _CODEC_CALLS:
            receiver = func.value
            ours = (isinstance(receiver, ast.Name) and receiver.id in {"file_text", *made}) or (
                _is_file_text_call(receiver)
            )
            if not ours:
                uses.append((node.lineno, f".{func.attr}("))
        uses += [(node.lineno, "encoding=") for kw in node.keywords if kw.arg == "encoding"]
    return uses


def _is_file_text_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "file_text"
    )


def test_every_file_tool_decodes_and_encodes_through_file_text():
    package = Path(caretz.__file__).parent
    found = [
        f"{path.relative_to(package)}:{line}: {what}"
        for path in _file_text_modules()
        if path.relative_to(package).as_posix() not in {CODEC_OWNER, *OTHER_TEXT}
        for line, what in _codec_uses(parsed(path))
    ]
    assert found == []
    assert (package / CODEC_OWNER).exists()


def test_the_codec_check_sees_a_decode_of_its_own(tmp_path):
    tree = ast.parse(
        "text = data.decode('utf-8', 'replace')\n"
        "ok = file_text.decode(data)\n"
        "reader = file_text.decoder(encoding)\n"
        "part = reader.decode(chunk)\n"
        "handle = open(path, encoding='latin-1')\n"
    )
    assert _codec_uses(tree) == [(1, ".decode("), (5, "encoding=")]


# Every tool result's cap comes from tools/result_cap.py (from the window and what the
# conversation uses), and every call of a tool goes through the registry, which fits the
# result to it: no tool can return more, and nothing else decides a cap.
def test_only_the_registry_runs_a_tool_and_only_result_cap_decides_a_cap():
    package = Path(caretz.__file__).parent
    runs, caps = [], []
    for path in package.rglob("*.py"):
        shown = path.relative_to(package).as_posix()
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "run" and len(node.args) == 2:
                # A ToolRegistry's run (`parts.tools.run(call, ctx)`) is the way in.
                through_registry = ast.unparse(func.value).endswith(("tools", "registry"))
                context = ast.unparse(node.args[1])
                if (
                    context.endswith("ctx")
                    and not through_registry
                    and shown != "tools/registry.py"
                ):
                    runs.append(f"{shown}:{node.lineno}")
            for keyword in node.keywords:
                if keyword.arg == "output_limit_chars" and not _calls_cap_chars(keyword.value):
                    caps.append(f"{shown}:{node.lineno}")
    assert runs == [] and caps == []


def _calls_cap_chars(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("cap_chars")
