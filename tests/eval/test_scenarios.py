"""The guard benchmark's scripted scenarios: where the guard asks, and where it stops."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "guard_scenarios.py"


@pytest.fixture(scope="module")
def scenarios(request):
    spec = importlib.util.spec_from_file_location("guard_scenarios", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["guard_scenarios"] = module  # dataclasses look it up
    request.addfinalizer(lambda: sys.modules.pop("guard_scenarios", None))
    spec.loader.exec_module(module)
    return module


def test_stuck_scenarios_stop_with_a_stuck_judge(scenarios):
    for make in (scenarios.stuck_identical, scenarios.stuck_varied):
        outcome = scenarios.play(make(), "stuck")
        assert (outcome.first_ask, outcome.redirect, outcome.stop) == (3, 3, 6)


def test_productive_scenarios_never_stop_with_a_not_stuck_judge(scenarios):
    for make in (
        scenarios.productive_distinct,
        scenarios.polling,
        scenarios.polling_with_sleep,
        scenarios.converging_test_cycle,
    ):
        outcome = scenarios.play(make(), "not stuck")
        assert (outcome.redirect, outcome.stop) == (None, None), make.__name__
    assert scenarios.play(scenarios.polling(), "not stuck").judge_calls <= 3


def test_the_text_loop_is_cut_without_any_judge(scenarios):
    outcome = scenarios.play(scenarios.text_loop(), "none")
    assert outcome.redirect == 5 and outcome.judge_calls == 0


def test_the_table_has_a_row_per_scenario(scenarios):
    table = scenarios.scenario_table().splitlines()
    assert len(table) == 2 + len(scenarios.SCENARIOS)
    assert table[0].startswith("| scenario | calls | first ask | judge says stuck |")
