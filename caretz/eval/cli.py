"""`caretz guard ...`: check the loop guard's calls on recorded trajectories.

Every caretz command loads this module (the CLI mounts `guard_app`), so what the commands
use is declared lazy below: `caretz --help` loads none of it.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from caretz.lazy import lazy_module
from caretz.lazy_dataclass import lazy_dataclass
from caretz.text import shorten
from caretz.usage_error import fail

if TYPE_CHECKING:
    import json

    from pydantic import alias_generators

    from caretz import config_base, pricing
    from caretz.config import settings as config_settings
    from caretz.eval import judge_command, replay
    from caretz.eval import labels as eval_labels
    from caretz.guard import detectors_config
    from caretz.guard.config import LoopGuardConfig
    from caretz.guard.model import Judge
    from caretz.messages import Reasoning
    from caretz.providers import resolve as providers_resolve
    from caretz.runtime import judge as runtime_judge
    from caretz.runtime import models as runtime_models
    from caretz.session import store as session_store
else:
    # What the commands run on, loaded when one runs (not by `caretz --help` or any other command).
    replay = lazy_module("caretz.eval.replay")
    judge_command = lazy_module("caretz.eval.judge_command")
    eval_labels = lazy_module("caretz.eval.labels")
    pricing = lazy_module("caretz.pricing")
    session_store = lazy_module("caretz.session.store")
    config_settings = lazy_module("caretz.config.settings")
    providers_resolve = lazy_module("caretz.providers.resolve")
    runtime_judge = lazy_module("caretz.runtime.judge")
    runtime_models = lazy_module("caretz.runtime.models")
    detectors_config = lazy_module("caretz.guard.detectors_config")
    alias_generators = lazy_module("pydantic.alias_generators")
    json = lazy_module("json")
    config_base = lazy_module("caretz.config_base")

GUARD_HELP = "Check the loop guard's calls on recorded trajectories before trusting it."
REPLAY_HELP = "Replay trajectories through the loop guard in shadow mode and show where it fires."
FILES_HELP = "Corpus JSONL files, session events.jsonl files, session folders or session IDs."
REASONING_LEVELS: tuple[Reasoning, ...] = ("off", "low", "medium", "high")

guard_app = typer.Typer(
    help=GUARD_HELP,
    short_help=GUARD_HELP,  # in full: Click would cut it to "… before..." in `caretz --help`
    no_args_is_help=True,
    rich_markup_mode=None,
)


class _PlainArgumentsCommand(TyperCommand):
    """Help that names the FILE arguments as people write them: `FILE...`, not Typer's
    `{FILE}...` and `FILE <list[Path]>`."""

    # The ignores: Typer hands its own Context; the base names click's, which Typer keeps private.
    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return [self.options_metavar or "[OPTIONS]", "FILE..."]

    def format_options(self, ctx: typer.Context, formatter: Any) -> None:  # type: ignore[override]
        with formatter.section("Arguments"):
            formatter.write_dl([("FILE...", FILES_HELP)])
        options = [
            record
            for param in self.get_params(ctx)
            if param.param_type_name == "option" and (record := param.get_help_record(ctx))
        ]
        with formatter.section("Options"):
            formatter.write_dl(options)


@guard_app.callback()
def guard_callback() -> None:
    """Loop-guard tools."""


class UsageProblem(Exception):
    """A bad flag value, told in one line (exit 2)."""


# Options both commands take.
ConfigOption = Annotated[
    Path | None, typer.Option(metavar="PATH", help="profiles.json to read [env: CARETZ_CONFIG].")
]
ProfileOption = Annotated[
    str | None, typer.Option(metavar="NAME", help="Profile in profiles.json [env: CARETZ_PROFILE].")
]
RepeatThresholdOption = Annotated[
    int | None,
    typer.Option(min=1, metavar="N", help="Same failure this many times asks the judge."),
]
CheckEveryOption = Annotated[
    int | None,
    typer.Option(min=0, metavar="N", help="Ask the judge every N tool calls; 0 turns it off."),
]
DetectorOption = Annotated[
    list[str] | None,
    typer.Option(
        metavar="NAME=on|off",
        help="Switch a detector, repeatable (identical-call, repeated-error, alternation, ...).",
    ),
]


@guard_app.command("replay", short_help=REPLAY_HELP, cls=_PlainArgumentsCommand)
def replay_command(
    files: Annotated[
        list[Path], typer.Argument(help=FILES_HELP, metavar="FILE", show_default=False)
    ],
    config: ConfigOption = None,
    profile: ProfileOption = None,
    repeat_threshold: RepeatThresholdOption = None,
    check_every: CheckEveryOption = None,
    detector: DetectorOption = None,
    judge: Annotated[
        str | None,
        typer.Option(
            metavar="PROVIDER/MODEL",
            help="The model to judge with (makes model calls; needs its key).",
        ),
    ] = None,
    output: Annotated[
        str, typer.Option(metavar="FORMAT", help="text, or json (JSONL: firings, summaries).")
    ] = "text",
) -> None:
    """Replay trajectories through the loop guard in shadow mode and show where it fires.

    Without --judge no model is called: every check counts as "not stuck", so
    the firings show each place the guard would have asked its judge.
    """
    try:
        if output not in ("text", "json"):
            raise UsageProblem(f"--output {output!r}: expected text or json")
        env = dict(os.environ)
        settings = _settings(config, profile, env)
        guard_config = apply_flags(settings.loop_guard, repeat_threshold, check_every, detector)
        replay_judge = _judge(judge, settings, env) if judge else None
        trajectories = replay.load_all([_session_or_path(f, settings) for f in files])
    except (config_base.ConfigError, replay.TrajectoryError, UsageProblem) as exc:
        raise typer.Exit(fail(str(exc))) from None
    results = replay.replay_all(trajectories, guard_config, replay_judge)
    render = _render_json if output == "json" else _render_text
    for result in results:
        for line in render(result):
            typer.echo(line)


@guard_app.command("eval")
def eval_command(
    ctx: typer.Context,
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Labelled corpus JSONL files, or sessions (events.jsonl, folders, IDs) "
            "with --labels.",
            metavar="FILE",
            show_default=False,
        ),
    ],
    judge: Annotated[
        str,
        typer.Option(
            help="The judge to score: provider/model, local/PATH.gguf, or a bare model ID "
            "with --base-url (makes model calls).",
            show_default=False,
        ),
    ],
    base_url: Annotated[
        str | None, typer.Option(help="An OpenAI-compatible endpoint for the judge.")
    ] = None,
    reasoning: Annotated[
        str | None, typer.Option(help="The judge's reasoning: off, low, medium or high.")
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(help='JSON labels by trajectory or session ID: {"ID": {"stuck": …}}.'),
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Trajectories judged at once (parallel judge calls).")
    ] = 4,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N labelled trajectories.")
    ] = None,
    cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Reuse and keep the judge's answers.")
    ] = True,
    within: Annotated[
        int, typer.Option(min=0, help="Steps after the loop's onset that count as in time.")
    ] = 10,
    judge_timeout: Annotated[
        str | None, typer.Option(help="Wait this long per judge call (default: judgeTimeout).")
    ] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
    repeat_threshold: RepeatThresholdOption = None,
    check_every: CheckEveryOption = None,
    detector: DetectorOption = None,
    output: Annotated[str, typer.Option(help="text, or json (one object).")] = "text",
) -> None:
    """Score a judge model: replay labelled trajectories, ask it wherever the guard
    would, and compare its verdicts with the labels (see docs/benchmarks.md)."""
    raise typer.Exit(_eval(ctx.params))  # every flag above, by name


def _eval(params: dict[str, Any]) -> int:
    problems = (
        config_base.ConfigError,
        replay.TrajectoryError,
        eval_labels.LabelError,
        UsageProblem,
    )
    try:
        evaluation = _evaluation(params)
    except problems as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    except KeyboardInterrupt:  # while a local judge model loads, say
        return judge_command.INTERRUPTED
    return judge_command.run_evaluation(
        evaluation, typer.echo, lambda text: typer.echo(text, err=True)
    )


def _evaluation(params: dict[str, Any]) -> judge_command.EvalPlan:
    """The command's flags, resolved; every usage or config problem is raised here."""
    if params["output"] not in ("text", "json"):
        raise UsageProblem(f"--output {params['output']!r}: expected text or json")
    env = dict(os.environ)
    settings = _settings(params["config"], params["profile"], env)
    flags = (params["repeat_threshold"], params["check_every"], params["detector"])
    guard_config = apply_flags(settings.loop_guard, *flags)
    if params["judge_timeout"] is not None:
        timeout = _timeout(params["judge_timeout"])
        guard_config = guard_config.model_copy(update={"judge_timeout": timeout})
    trajectories = replay.load_all([_session_or_path(f, settings) for f in params["files"]])
    labels = eval_labels.load_labels(params["labels"]) if params["labels"] else None
    labelling = eval_labels.apply_labels(trajectories, labels)
    if not labelling.labelled:  # nothing to score: an empty report would read as a result
        raise UsageProblem(
            f"none of the {len(labelling.unlabelled)} trajectories has a label, so there is "
            "nothing to score: give --labels FILE (docs/benchmarks.md) or a labelled corpus"
        )
    opened = open_judge(params["judge"], settings, env, params["base_url"], params["reasoning"])
    return judge_command.EvalPlan(
        labelling=labelling,
        config=guard_config,
        judge=opened.judge,
        judge_settings=opened.settings(),
        cost=lambda call: pricing.cost_usd(opened.model.ref, call.usage, settings.prices),
        data_dir=settings.data_dir,
        base_url=params["base_url"],
        use_cache=params["cache"],
        concurrency=params["concurrency"],
        limit=params["limit"],
        within=params["within"],
        output=params["output"],
    )


def _timeout(value: str) -> float:
    try:
        seconds = config_base.parse_duration(value)
    except ValueError as error:
        raise UsageProblem(f"--judge-timeout: {error}") from None
    if seconds <= 0:
        raise UsageProblem(f"--judge-timeout {value!r}: must be longer than 0s")
    return seconds


def _session_or_path(name: Path, settings: Any) -> Path:
    """A path as given, or the events of the session with that ID (see `caretz sessions list`)."""
    if name.exists() or len(name.parts) != 1:
        return name
    try:
        return session_store.SessionStore(settings.data_dir).events_path(str(name))
    except session_store.SessionNotFound:
        return name  # loading reports the missing file


def _settings(config: Path | None, profile: str | None, env: dict[str, str]) -> Any:
    return config_settings.resolve_settings({"config": config, "profile": profile}, env)


def _judge(ref: str, settings: Any, env: dict[str, str]) -> Judge:
    return open_judge(ref, settings, env).judge


@lazy_dataclass(frozen=True)
class OpenedJudge:
    judge: Judge
    model: providers_resolve.ResolvedModel
    reasoning: str

    def settings(self) -> dict[str, Any]:
        """What decides how this judge answers (besides the summary): the cache key's part."""
        entry = self.model.entry
        return {
            "model": self.model.ref,
            "model_id": self.model.model_id,
            "protocol": entry.protocol,
            "base_url": entry.base_url,
            "extra_body": entry.extra_body,
            "local": dataclasses.asdict(entry.local) if entry.local is not None else None,
            "reasoning": self.reasoning,
        }


def open_judge(
    ref: str,
    settings: Any,
    env: dict[str, str],
    base_url: str | None = None,
    reasoning: str | None = None,
) -> OpenedJudge:
    """The judge model through the runtime's own wiring (any provider, `local/PATH.gguf`,
    a bare model ID on `base_url`); a missing key or model fails here, before any replay."""
    chosen = reasoning if reasoning is not None else settings.loop_guard.judge.reasoning or "off"
    level = next((each for each in REASONING_LEVELS if each == chosen), None)
    if level is None:
        raise UsageProblem(f"--reasoning {reasoning!r}: expected off, low, medium or high")
    model = providers_resolve.resolve_model(
        ref, settings.providers, base_url, env, config_file=settings.config_path
    )
    provider = runtime_models.open_provider(model, env, runtime_models.request_limits(settings))
    return OpenedJudge(
        runtime_judge.model_judge(provider, model.model_id, model.ref, level), model, level
    )


# ---------------------------------------------------------------- flags


def apply_flags(
    config: LoopGuardConfig,
    repeat_threshold: int | None = None,
    check_every: int | None = None,
    detector_switches: list[str] | None = None,
) -> LoopGuardConfig:
    """The profile's loop-guard settings with the command-line flags applied."""
    data = config.model_dump()
    if repeat_threshold is not None:
        data["repeat_threshold"] = repeat_threshold
    if check_every is not None:
        data["check_every"] = check_every
    for switch in detector_switches or []:
        name, enabled = parse_detector_switch(switch)
        data["detectors"][name]["enabled"] = enabled
    return type(config).model_validate(data)


def detector_names() -> dict[str, str]:
    """Every spelling accepted by --detector (snake, camel, kebab) → the settings key."""
    names: dict[str, str] = {}
    for key, field in detectors_config.DetectorsConfig.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and "enabled" in getattr(annotation, "model_fields", {}):
            for spelling in (key, alias_generators.to_camel(key), key.replace("_", "-")):
                names[spelling] = key
    return names


def parse_detector_switch(switch: str) -> tuple[str, bool]:
    name, _, value = switch.partition("=")
    names = detector_names()
    if name not in names:
        known = ", ".join(sorted({key.replace("_", "-") for key in names.values()}))
        raise UsageProblem(f"--detector {switch!r}: unknown detector {name!r}; known: {known}")
    if value not in ("on", "off"):
        raise UsageProblem(f"--detector {switch!r}: write NAME=on or NAME=off")
    return names[name], value == "on"


# ---------------------------------------------------------------- output


def _render_json(result: replay.ReplayResult) -> list[str]:
    lines = [json.dumps(firing.to_json(result.trajectory.id)) for firing in result.firings]
    lines.append(json.dumps(result.summary_json()))
    return lines


def _render_text(result: replay.ReplayResult) -> list[str]:
    trajectory = result.trajectory
    steps = len(trajectory.steps)
    header = f"{trajectory.id}  {steps} step{'' if steps == 1 else 's'}"
    lines = [header + _label_text(trajectory.label)]
    firings = result.firings
    for index, firing in enumerate(firings):
        line = f"  step {firing.step:>4}  {firing.trigger:<14} [{firing.severity}] {firing.fingerprint}"
        lines.append(_one_line(line))
        # Firings at one step share one judge call: its verdict follows the last of them.
        after = firings[index + 1] if index + 1 < len(firings) else None
        shared = after is not None and (after.step, after.verdict) == (firing.step, firing.verdict)
        if firing.verdict is not None and not shared:
            lines.append(_one_line(f"             → {_verdict_text(firing.verdict)}"))
    lines.append(_closing_text(result))
    return lines


def _label_text(label: dict[str, Any] | None) -> str:
    if not label:
        return ""
    if not label.get("stuck"):
        return f"  label: {label.get('kind') or 'productive'}"
    where = f"stuck from step {label.get('first_stuck_step')}"
    if label.get("stuck_until") is not None:
        where += f" to {label['stuck_until']}"
    return f"  label: {where} ({label.get('kind')})"


def _verdict_text(verdict: dict[str, Any]) -> str:
    if verdict.get("error"):
        return f"not stuck (judge error: {verdict['error']})"
    state = "stuck" if verdict.get("stuck") else "not stuck"
    text = f"{state} ({float(verdict.get('confidence') or 0):.2f})"
    if verdict.get("reason"):
        text += f": {verdict['reason']}"
    if verdict.get("try_instead"):
        text += f" | try instead: {verdict['try_instead']}"
    return text


def _closing_text(result: replay.ReplayResult) -> str:
    if not result.firings:
        return "  no firings"
    counts = ", ".join(f"{name} {count}" for name, count in result.trigger_counts().items())
    total = len(result.firings)
    plural = "s" if total != 1 else ""
    return f"  {total} firing{plural} ({counts}); first at step {result.first_trigger_step}"


def _one_line(text: str, limit: int = 200) -> str:
    # Newlines only: the columns of a firing line are aligned with runs of spaces.
    return shorten(text.replace("\n", " "), limit)
