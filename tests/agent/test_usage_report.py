"""The one reading of what a run used (`usage_report`): the judge's share counted in the
usage and the cost, and shown apart; a stretch of a run measured from an earlier copy;
an unknown price makes the cost unknown; the budget counts the judge too."""

from __future__ import annotations

import dataclasses

import pytest

from caretz.agent.limits import RunTotals, UsageLimits, usage_report
from caretz.agent.outcomes import LimitReached
from caretz.messages import Usage


def a_guarded_run() -> RunTotals:
    totals = RunTotals()
    totals.add_response(Usage(input_tokens=100, output_tokens=20, cache_read_tokens=50), 0.01)
    totals.add_response(Usage(input_tokens=200, output_tokens=30), 0.02)
    totals.add_judge_call(Usage(input_tokens=1000, output_tokens=40), 0.003)
    return totals


def test_the_report_counts_the_judge_in_and_shows_it_apart():
    report = usage_report(a_guarded_run())

    assert report.usage == Usage(input_tokens=1300, output_tokens=90, cache_read_tokens=50)
    assert report.judge_usage == Usage(input_tokens=1000, output_tokens=40)
    assert report.cost_usd == pytest.approx(0.033)
    assert report.judge_cost_usd == pytest.approx(0.003)
    assert report.judge_calls == 1
    assert report.usage_dict() == {
        "input_tokens": 1300,
        "output_tokens": 90,
        "cache_read_tokens": 50,
        "cache_write_tokens": 0,
        "judge": {
            "input_tokens": 1000,
            "output_tokens": 40,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        },
    }


def test_a_stretch_of_the_run_is_what_came_after_the_copy():
    totals = a_guarded_run()
    before = dataclasses.replace(totals)
    totals.add_response(Usage(input_tokens=10, output_tokens=1), 0.001)
    totals.add_judge_call(Usage(input_tokens=500, output_tokens=5), 0.0005)

    report = usage_report(totals, before)

    assert (report.usage, report.judge_usage) == (
        Usage(input_tokens=510, output_tokens=6),
        Usage(input_tokens=500, output_tokens=5),
    )
    assert report.cost_usd == pytest.approx(0.0015)
    assert report.judge_calls == 1


def test_a_judge_without_a_price_makes_the_cost_unknown_but_not_the_tokens():
    totals = RunTotals()
    totals.add_response(Usage(input_tokens=100, output_tokens=20), 0.01)
    totals.add_judge_call(Usage(input_tokens=1000, output_tokens=40), None)

    report = usage_report(totals)

    assert (report.cost_usd, report.judge_cost_usd) == (None, None)
    assert report.usage == Usage(input_tokens=1100, output_tokens=60)


def test_the_budget_counts_the_judges_calls():
    totals = RunTotals()
    totals.add_response(Usage(input_tokens=100, output_tokens=20), 0.8)
    limits = UsageLimits(max_budget_usd=1.0)
    limits.check_before_request(totals)  # 0.8 of 1.0: the next request goes

    totals.add_judge_call(Usage(input_tokens=1000, output_tokens=40), 0.25)

    with pytest.raises(LimitReached, match=r"\$1\.0500 spent of --max-budget-usd 1"):
        limits.check_before_request(totals)


def test_the_budget_stops_the_run_once_reached_not_only_once_exceeded():
    totals = RunTotals()
    totals.add_response(Usage(input_tokens=100, output_tokens=20), 0.25)
    limits = UsageLimits(max_budget_usd=0.5)
    limits.check_before_request(totals)  # half of it: the next request goes

    totals.add_response(
        Usage(input_tokens=100, output_tokens=20), 0.25
    )  # exactly the budget (0.25 + 0.25 is 0.5)

    with pytest.raises(LimitReached, match=r"\$0\.5000 spent of --max-budget-usd 0\.5"):
        limits.check_before_request(totals)


def test_the_tool_call_limit_stops_at_the_limit():
    totals = RunTotals(tool_calls=2)
    limits = UsageLimits(max_tool_calls=3)
    limits.check_before_tool_call(totals)
    totals.tool_calls = 3
    with pytest.raises(LimitReached, match="tool call limit reached: 3 of --max-tool-calls 3"):
        limits.check_before_tool_call(totals)
