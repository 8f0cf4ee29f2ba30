"""`caretz doctor`: what is set up here, one line an item, and a fix for each problem.

Items: the settings, the provider keys (which are set, never a value), the model a run
starts on and whether it can, the sandbox (`caretz sandbox check`'s probe), git, ripgrep,
the MCP servers configured (none is started), the data dir and its permissions, and the
project's configuration and its approval. Exit 0 when a session on the default model can
start here, 1 when something stops it (a line marked ✗ says what).
"""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from caretz import __version__
from caretz.commands.loading import load_settings
from caretz.commands.sandbox import sandbox_report
from caretz.config_base import ConfigError
from caretz.providers import wire
from caretz.providers.entry import LocalModel
from caretz.providers.local_spec import LocalServerError, server_spec
from caretz.providers.resolve import CUSTOM_API_KEY_ENV, example_ref, key_providers
from caretz.runtime import project_trust, trust_notice
from caretz.runtime.mcp import configured_servers
from caretz.sandbox.detect import SandboxBackend
from caretz.tools.ripgrep import RipgrepMissing, rg_path

if TYPE_CHECKING:
    from caretz.config.overrides import Flags
    from caretz.config.settings import Settings

PROBE_S = 2.0  # a server on this machine answers its model list within this, or is not up
LOCAL_EXTRA = "pip install 'caretz[local]'"


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One item's line: ok, a warning (`blocks` False) or a problem that stops a session."""

    item: str
    detail: str
    ok: bool = True
    fix: str = ""
    blocks: bool = False  # a session cannot start while this holds

    def line(self) -> str:
        mark = "✓" if self.ok else ("✗" if self.blocks else "!")
        fix = f" (fix: {self.fix})" if self.fix and not self.ok else ""
        return f"{mark} {self.item}: {self.detail}{fix}"


def doctor_command(flags: Flags, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    findings = list(diagnose(flags, env, Path.cwd()))
    sys.stdout.write(f"caretz {__version__}, Python {sys.version.split()[0]}\n")
    for finding in findings:
        sys.stdout.write(finding.line() + "\n")
    return 1 if any(finding.blocks for finding in findings) else 0


def diagnose(flags: Flags, env: Mapping[str, str], workspace: Path) -> Iterator[Finding]:
    try:
        settings = load_settings(flags)
    except ConfigError as error:
        yield Finding(item="settings", detail=str(error), ok=False, fix="correct it", blocks=True)
        yield keys_finding(env)
        return
    yield settings_finding(settings)
    yield keys_finding(env, settings)
    yield model_finding(settings, env, workspace)
    yield from sandbox_findings(settings, env, workspace)
    yield ripgrep_finding()
    yield data_dir_finding(settings.data_dir)
    yield from project_findings(settings, workspace)


def settings_finding(settings: Settings) -> Finding:
    path = settings.config_path
    where = str(path) if path.exists() else f"no {path} (the defaults)"
    return Finding(item="settings", detail=f"{where}, profile {settings.profile_name}")


def keys_finding(env: Mapping[str, str], settings: Settings | None = None) -> Finding:
    """Which providers' key variables are set (never a value)."""
    variables = [CUSTOM_API_KEY_ENV]
    if settings is not None:
        entries = settings.providers.values()
        variables = [e.api_key_env for e in entries if e.api_key_env] + variables
    variables = list(dict.fromkeys(variables))
    have = [name for name in variables if env.get(name, "").strip()]
    missing = [name for name in variables if name not in have]
    detail = f"set: {', '.join(have) or 'none'}; not set: {', '.join(missing) or 'none'}"
    if have:
        return Finding(item="provider keys", detail=detail)
    fix = "set one, or run a model that needs none (--base-url, local/PATH.gguf)"
    return Finding(item="provider keys", detail=detail, ok=False, fix=fix)


def model_finding(settings: Settings, env: Mapping[str, str], workspace: Path) -> Finding:
    """Whether the model a run starts on can be reached: its key, its file, its server."""
    model, entry = settings.model, settings.model.entry
    item = f"model {model.ref}"
    if entry.local is not None:
        return local_model_finding(item, entry.local, model.model_id, workspace)
    if entry.api_key_env and not env.get(entry.api_key_env, "").strip():
        reached = [
            f"--model {example_ref(name)}"
            for name, variable in key_providers(exclude=entry.api_key_env)
            if env.get(variable, "").strip()
        ]
        fix = f"set {entry.api_key_env}, or " + (
            f"run a model your keys reach: {', '.join(reached)}"
            if reached
            else "--base-url URL --model NAME (a local server), or --model local/PATH.gguf"
        )
        return Finding(
            item=item, detail=f"{entry.api_key_env} is not set", ok=False, fix=fix, blocks=True
        )
    key = f"its key {entry.api_key_env} is set" if entry.api_key_env else "it needs no key"
    if not wire.names_this_machine(entry.base_url):
        return Finding(item=item, detail=f"{entry.base_url}, {key}")
    try:
        answered = wire.get(entry.base_url.rstrip("/") + "/models", PROBE_S).status_code < 500
    except wire.WireError:
        answered = False
    if answered:
        return Finding(item=item, detail=f"the server at {entry.base_url} answers, {key}")
    fix = "start it, or name its URL with --base-url"
    return Finding(
        item=item, detail=f"nothing answers at {entry.base_url}", ok=False, fix=fix, blocks=True
    )


def local_model_finding(item: str, local: LocalModel, model_id: str, workspace: Path) -> Finding:
    try:
        spec = server_spec(local, model_id, workspace)
    except LocalServerError as error:
        fix = "name an existing .gguf file: --model local/PATH.gguf"
        return Finding(item=item, detail=str(error), ok=False, fix=fix, blocks=True)
    if importlib.util.find_spec("xllamacpp") is None:
        detail = "llama.cpp's server (xllamacpp) is not installed"
        return Finding(item=item, detail=detail, ok=False, fix=LOCAL_EXTRA, blocks=True)
    return Finding(item=item, detail=f"{spec.model_path}, served by llama.cpp on this machine")


def sandbox_findings(
    settings: Settings, env: Mapping[str, str], workspace: Path
) -> Iterator[Finding]:
    """The sandbox as `caretz sandbox check` finds it, and git (which caretz runs itself)."""
    try:
        check, roots, refused = sandbox_report(settings, workspace, env)
    except ConfigError as error:
        yield Finding(
            item="sandbox",
            detail=str(error),
            ok=False,
            fix="correct the sandbox section",
            blocks=True,
        )
        return
    writable = ", ".join(roots) or "nothing"
    where = f"{check.mode.value}, network {check.network_label}, writable: {writable}"
    if refused or check.problem:
        fix = "see caretz sandbox check"
        yield Finding(
            item="sandbox", detail=refused or check.problem or "", ok=False, fix=fix, blocks=True
        )
    elif check.backend is SandboxBackend.NONE:
        yield Finding(item="sandbox", detail=f"off ({where}): commands run on your machine as you")
    elif check.notice:
        yield Finding(
            item="sandbox", detail=f"{check.backend.value} ({where}): {check.notice}", ok=False
        )
    else:
        yield Finding(item="sandbox", detail=f"{check.backend.value} ({where})")
    git = check.programs.git if check.programs is not None else None
    if git is not None and git.path:
        yield Finding(item="git", detail=git.path)
    else:
        notice = git.notice() if git is not None else None
        detail = (
            notice or "not found: checkpoints (/rewind, /undo) and the prompt's git status are off"
        )
        yield Finding(item="git", detail=detail, ok=False, fix="install git")


def ripgrep_finding() -> Finding:
    try:
        return Finding(item="ripgrep", detail=str(rg_path()))
    except RipgrepMissing as error:
        return Finding(item="ripgrep", detail=f"grep and glob cannot run: {error}", ok=False)


def data_dir_finding(data_dir: Path) -> Finding:
    """Where sessions, checkpoints and approvals are kept: private, and writable."""
    item = "data dir"
    existing = data_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        fix = f"make {existing} writable, or set CARETZ_DATA_DIR to a folder you own"
        return Finding(
            item=item,
            detail=f"{data_dir}: cannot write in {existing}",
            ok=False,
            fix=fix,
            blocks=True,
        )
    if existing != data_dir:
        return Finding(item=item, detail=f"{data_dir} (made private at the first session)")
    mode = stat.S_IMODE(data_dir.stat().st_mode)
    if mode & 0o077:
        detail = f"{data_dir} is {mode:04o}: others on this machine can read your sessions"
        return Finding(item=item, detail=detail, ok=False, fix=f"chmod 700 {data_dir}")
    return Finding(item=item, detail=f"{data_dir} ({mode:04o})")


def project_findings(settings: Settings, workspace: Path) -> Iterator[Finding]:
    """The project's configuration and its approval (the gate's), and its MCP servers."""
    try:
        trust = project_trust.project_trust(settings, workspace)
    except ConfigError as error:
        yield Finding(
            item="project", detail=str(error), ok=False, fix="correct the file", blocks=True
        )
        return
    root = trust.config.root
    if not trust.config.parts():
        yield Finding(item="project", detail=f"{root}: nothing to approve")
    elif trust.approved:
        yield Finding(item="project", detail=f"{root}: its configuration is approved as it is now")
    else:
        notice = trust_notice.not_approved_notice(trust)
        yield Finding(item="project", detail=f"{root}: {notice}", ok=False, fix="caretz trust")
    servers = configured_servers(settings, trust)
    if not servers:
        yield Finding(item="MCP servers", detail="none configured")
        return
    names = [
        f"{s.name} (.mcp.json{'' if trust.server_approved(s.name) else ', not approved'})"
        if s.project
        else s.name
        for s in servers
    ]
    yield Finding(
        item="MCP servers", detail=f"{', '.join(names)}; caretz mcp list starts them to check"
    )
