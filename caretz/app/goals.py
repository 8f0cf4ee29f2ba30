"""Goals as a session pursues them: the evaluator built (a ConfigError before any turn),
a new goal set or the paused one resumed, each through `GoalDriver`'s turns.

`paused_goal` and `check_evaluator` let `-p --goal` and `-p --resume` refuse a run
before its session opens, so a bad evaluator or a session without a paused goal leaves
nothing behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caretz.checkpoints.project import project_root
from caretz.lazy import lazy_module
from caretz.session.events import read_events
from caretz.session.store import SessionStore

if TYPE_CHECKING:
    from caretz.agent import goal_driver as goal_driving
    from caretz.goal import state as goal_state
    from caretz.runtime import judge as judging
else:
    # The goal's modules: only with a goal.
    goal_state = lazy_module("caretz.goal.state")
    goal_driving = lazy_module("caretz.agent.goal_driver")
    judging = lazy_module("caretz.runtime.judge")  # the evaluator: loaded after the start probes

if TYPE_CHECKING:
    from caretz.agent.agent import Agent
    from caretz.agent.goal_driver import GoalDriver
    from caretz.config.settings import Settings
    from caretz.goal.state import Goal


def logged_goal(events_path: Path) -> Goal | None:
    """The goal a session's log holds (a resumed session's paused one), if any."""
    if not events_path.is_file():
        return None
    return goal_state.restore_goal(read_events(events_path))


def paused_goal(settings: Settings, resume: str | None, workspace: Path) -> Goal | None:
    """The paused goal of the session `resume` names ("latest": this project's newest);
    raises SessionNotFound."""
    if resume is None:
        return None
    store = SessionStore(settings.data_dir)
    latest = resume == "latest"
    goal = logged_goal(
        store.events_path(store.latest(project_root(workspace)) if latest else resume)
    )
    return goal if goal is not None and goal.status == "paused" else None


def check_evaluator(settings: Settings, env: Mapping[str, str]) -> None:
    """Raises ConfigError when the goal's evaluator cannot be built (its model, its key)."""
    judging.build_evaluator(settings, env)


def goal_driver(agent: Agent, settings: Settings, env: Mapping[str, str], goal: Goal) -> GoalDriver:
    """A driver of `goal`'s turns on `agent`; raises ConfigError (the evaluator) first."""
    evaluator = judging.build_evaluator(settings, env)
    return goal_driving.GoalDriver(agent, goal, evaluator, settings.goal.judge_timeout_s)


def new_goal(settings: Settings, condition: str, prompt: str | None) -> Goal:
    condition = condition.strip()
    return goal_state.Goal(condition, settings.goal.max_turns, prompt or condition)
