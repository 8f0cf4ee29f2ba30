"""caretz as a Harbor installed agent: `harbor run --agent
caretz.integrations.harbor:CaretzAgent -m anthropic/claude-sonnet-4-5 …` (docs/harbor.md).

It installs caretz in the task's environment (from the package index, or offline from a
folder of wheels given as the agent kwarg `wheels`), runs `caretz -p … --output json`
there, and reads the run back: tokens, cost (the loop guard's judge in), status and
guard verdicts into Harbor's context, the events into an ATIF `trajectory.json`.

Inside a task container the container is the boundary, as it is for Harbor's other
agents: caretz runs there with its sandbox off and every call allowed (`--sandbox off
--permission-mode yolo`); its deny rules and loop guard still apply.

Harbor is imported here and nowhere else in caretz; nothing in caretz imports this module.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import Annotated, Any, ClassVar

from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.installed.base import (
    AgentAuthenticationError,
    BaseInstalledAgent,
    ModelNotFoundError,
    NonZeroAgentExitCodeError,
    PackageSpec,
    with_prompt_template,
)
from harbor.agents.options import Cli, InstalledAgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext, ModelUsage
from harbor.models.trajectories import Trajectory
from pydantic import Field

from caretz.integrations import harbor_report
from caretz.providers.registry import BUILTIN_PROVIDERS

VENV = "/opt/caretz"
# The agent kwarg `config` (a profiles.json: profiles, prices, the loop guard's judge),
# uploaded here and named by CARETZ_CONFIG for the run.
CONFIG_IN_ENVIRONMENT = "/opt/caretz-config/profiles.json"
WHEELS_IN_ENVIRONMENT = "/tmp/caretz-wheels"
OUTPUT = "caretz.jsonl"  # the run's stdout: its events, then its result object
STDERR = "caretz.stderr.txt"
EXIT = "caretz.exit"
TRAJECTORY = "trajectory.json"
# The variables caretz's providers read (keys and base URLs), passed from Harbor's side.
PROVIDER_VARIABLES = tuple(
    sorted(
        {
            name
            for entry in BUILTIN_PROVIDERS.values()
            for name in (entry.api_key_env, entry.base_url_env)
            if name
        }
    )
)
_FAILURES: dict[str, type[NonZeroAgentExitCodeError]] = {
    "auth": AgentAuthenticationError,
    "model": ModelNotFoundError,
}


class CaretzOptions(InstalledAgentOptions):
    """The agent kwargs (`--ak NAME=VALUE`): where caretz comes from and its run's flags."""

    wheels: str | None = Field(
        default=None,
        description="A folder on Harbor's machine holding caretz's wheel and its "
        "dependencies' (and pip's), resolved for the task image's Python: caretz is "
        "installed from it with no index.",
    )
    loop_guard: Annotated[str | None, Cli("--loop-guard")] = Field(
        default=None, description="off, shadow or active."
    )
    loop_guard_model: Annotated[str | None, Cli("--loop-guard-model")] = Field(
        default=None, description="The loop guard's judge model (provider/model)."
    )
    max_tool_calls: Annotated[int | None, Cli("--max-tool-calls")] = Field(
        default=None, description="End the run after this many tool calls."
    )
    max_budget_usd: Annotated[float | None, Cli("--max-budget-usd")] = Field(
        default=None, description="End the run once it has cost this much."
    )


class CaretzAgent(BaseInstalledAgent):
    """caretz in the task's environment, headless, its result and events read back."""

    capabilities = AgentCapabilities(atif=True, native_config=True)
    options_model = CaretzOptions
    SYSTEM_PACKAGES: ClassVar[dict[str, PackageSpec]] = {
        **BaseInstalledAgent.SYSTEM_PACKAGES,
        "python3": PackageSpec(
            commands=("python3",),
            packages={
                "apt-get": ("python3", "python3-venv"),
                "dnf": ("python3",),
                "yum": ("python3",),
                "apk": ("python3",),
            },
        ),
    }

    @staticmethod
    def name() -> str:
        return "caretz"

    def get_version_command(self) -> str | None:
        return f"{VENV}/bin/caretz --version"

    def parse_version(self, stdout: str) -> str:
        return stdout.strip().removeprefix("caretz").strip()

    async def install(self, environment: BaseEnvironment) -> None:
        await self.ensure_system_dependencies(environment, ("bash", "python3"))
        options = self._caretz_options()
        if options.wheels:
            await environment.upload_dir(Path(options.wheels), WHEELS_IN_ENVIRONMENT)
            command = offline_install(self._requirement())
        else:
            command = index_install(self._requirement())
        await self.exec_as_root(environment, command=command)

    async def configure(self, environment: BaseEnvironment) -> None:
        source = self.config_source
        if source is None:
            return
        text = source.read_text() if isinstance(source, Path) else json.dumps(source)
        folder = str(PurePosixPath(CONFIG_IN_ENVIRONMENT).parent)
        await self.exec_as_root(environment, command=f"mkdir -p {folder}")
        await self._upload_config_text(
            environment, content=text, remote_path=CONFIG_IN_ENVIRONMENT, filename="profiles.json"
        )

    @with_prompt_template
    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        logs = self.environment_logs_dir
        command = run_command(instruction, self.model_name, self.build_cli_flags(), str(logs))
        env = {name: value for name in PROVIDER_VARIABLES if (value := self._get_env(name))}
        if self.config_source is not None:
            env["CARETZ_CONFIG"] = CONFIG_IN_ENVIRONMENT
        done = await environment.exec(command=command, env=env or None)
        await self._bring_back(environment, logs)
        self._fill_context(context)
        result = self._result()
        kind = harbor_report.failure(done.return_code, result)
        if kind is not None:
            said = SimpleNamespace(
                return_code=done.return_code,
                stdout=str((result or {}).get("message", "")),
                stderr=self._stderr() or done.stderr,
            )
            exception = _FAILURES.get(kind) or type(self._classify_exec_error("caretz", said))
            raise exception(f"caretz exited {done.return_code}: {self._last_words(said)}")

    async def _bring_back(self, environment: BaseEnvironment, logs: PurePosixPath) -> None:
        """The run's output files from the environment, where the logs folder is not
        shared with Harbor's machine (remote backends sync it only after the run)."""
        for name in (OUTPUT, STDERR):
            if not (self.logs_dir / name).is_file():
                with contextlib.suppress(Exception):
                    await environment.download_file(str(logs / name), self.logs_dir / name)

    def populate_context_post_run(self, context: AgentContext) -> None:
        self._fill_context(context)

    def _fill_context(self, context: AgentContext) -> None:
        """Harbor's context and `trajectory.json` from the run's output, when it is here
        (the logs folder is synced back after the run on remote backends)."""
        path = self.logs_dir / OUTPUT
        if not path.is_file():
            return
        output = harbor_report.read_output(path.read_text(errors="replace").splitlines())
        if output.result is not None:
            fields = harbor_report.context_fields(output.result)
            models = fields.pop("model_usage")
            for name, value in fields.items():
                setattr(context, name, value)
            context.model_usage = {name: ModelUsage(**usage) for name, usage in models.items()}
        document = harbor_report.trajectory(output, self.version() or "", self.model_name)
        if not document["steps"]:  # refused before its first turn: no trajectory to tell
            return
        trajectory = Trajectory.model_validate(document)
        text = json.dumps(trajectory.to_json_dict(), indent=2)
        (self.logs_dir / TRAJECTORY).write_text(text)

    def _result(self) -> dict[str, Any] | None:
        path = self.logs_dir / OUTPUT
        if not path.is_file():
            return None
        return harbor_report.read_output(path.read_text(errors="replace").splitlines()).result

    def _stderr(self) -> str:
        path = self.logs_dir / STDERR
        return path.read_text(errors="replace") if path.is_file() else ""

    @staticmethod
    def _last_words(said: Any) -> str:
        if said.stdout:
            return str(said.stdout)
        lines = str(said.stderr or "").splitlines()
        return next((line for line in reversed(lines) if line.strip()), "no output")

    def _caretz_options(self) -> CaretzOptions:
        assert isinstance(self.options, CaretzOptions)
        return self.options

    def _requirement(self) -> str:
        version = self.version()
        return f"caretz=={version}" if version else "caretz"


def offline_install(requirement: str) -> str:
    """caretz into its own venv from the uploaded wheels, pip run from its own wheel
    (so the image needs no pip and no venv module with it), then on the PATH."""
    wheels = WHEELS_IN_ENVIRONMENT
    return (
        "set -e; "
        f"rm -rf {VENV}; python3 -m venv --without-pip {VENV}; "
        f"pip_wheel=$(ls {wheels}/pip-*.whl | head -n1); "
        f'{VENV}/bin/python "$pip_wheel/pip" install --quiet --no-index '
        f"--find-links {wheels} {shlex.quote(requirement)}; "
        f"ln -sf {VENV}/bin/caretz /usr/local/bin/caretz; caretz --version"
    )


def index_install(requirement: str) -> str:
    """caretz into its own venv from the package index, then on the PATH."""
    return (
        "set -e; "
        f"rm -rf {VENV}; python3 -m venv {VENV}; "
        f"{VENV}/bin/python -m pip install --quiet {shlex.quote(requirement)}; "
        f"ln -sf {VENV}/bin/caretz /usr/local/bin/caretz; caretz --version"
    )


def run_command(instruction: str, model: str | None, flags: str, logs: str) -> str:
    """`caretz -p` headless in the task's working folder: its events and result object
    to the logs folder (which Harbor brings back), its exit code kept beside them. The
    sandbox is off and every call allowed: the container is the boundary."""
    parts = [
        "caretz",
        "-p",
        shlex.quote(instruction),
        "--output",
        "json",
        "--sandbox",
        "off",
        "--permission-mode",
        "yolo",
    ]
    if model:
        parts += ["--model", shlex.quote(model)]
    if flags:
        parts.append(flags)
    return (
        f"mkdir -p {logs}; "
        f"{' '.join(parts)} < /dev/null > {logs}/{OUTPUT} 2> {logs}/{STDERR}; "
        f"code=$?; echo $code > {logs}/{EXIT}; exit $code"
    )
