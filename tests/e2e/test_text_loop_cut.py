"""A reply that repeats itself is cut, whatever the loop guard's mode, through the real
CLI on the OpenAI-compatible route a local server takes (`--base-url`, a bare model)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import turn_end
from tests.modelserver import Reply, text

MODEL = "smollm2"
SENTENCE = "I am a helpful assistant and I can help you with that. "  # one sentence, again
REPO = Path(__file__).resolve().parents[2]


def local_route(server) -> list[str]:
    return ["--model", MODEL, "--base-url", server.openai_url]


def test_a_reply_repeating_one_sentence_is_cut_with_the_guard_off(caretz, server):
    server.add(text(SENTENCE * 300), model=MODEL)

    run = caretz("-p", "hello", *local_route(server), env={"ANTHROPIC_API_KEY": None})

    assert run.code == 3, run.stderr
    assert 5 <= run.stdout.count(SENTENCE) <= 6  # cut at the fifth repeat, not the 300th
    (headline,) = [line for line in run.stderr.splitlines() if "stream-text" in line]
    assert headline.startswith("[loop-guard] stream-text: text repeated 5×: ")
    assert "helpful assistant" in headline and headline.endswith("→ ending the turn")
    assert "so caretz cut it off and ended the turn" in run.stderr
    assert 'Carry on from there with: caretz --continue -p "…"' in run.stderr
    assert len(server.requests_for(MODEL)) == 1
    events = caretz.events(run.session_id)
    (response,) = [e for e in events if e["type"] == "Model.Response"]
    kept, marker = response["message"]["content"].split("\n[stream stopped by the loop guard: ")
    assert kept.startswith(SENTENCE * 5) and marker.startswith("the answer repeated")
    (stopped,) = [e for e in events if e["type"] == "LoopGuard.Stopped"]
    assert stopped["mode"] == "off" and stopped["detector"] == "stream-text"
    assert (turn_end(events)["status"], turn_end(events)["exit_code"]) == ("loop_guard", 3)


def test_a_server_streaming_one_piece_for_ever_is_cut_in_shadow_mode(caretz, server):
    # The first 7-character piece ("I am a ") again and again, until the client hangs up.
    server.add(Reply(text=SENTENCE, endless_text=True), model=MODEL)

    run = caretz(
        "-p",
        "hello",
        *local_route(server),
        "--loop-guard",
        "shadow",
        "--output",
        "json",
        env={"ANTHROPIC_API_KEY": None},
    )

    assert run.code == 3, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["status"] == "loop_guard" and result["exit_code"] == 3
    assert "cut it off and ended the turn" in result["message"]
    assert result["text"].startswith("I am a I am a ")
    assert len(result["text"].split("\n[stream stopped")[0]) < 400


def test_long_real_text_with_repeated_structure_is_never_cut(caretz, server):
    # The README, a table whose rows share everything but a number, and a list whose
    # items share a long prefix: long, and no loop.
    readme = (REPO / "README.md").read_text()
    table = "| file | check | result |\n| --- | --- | --- |\n" + "".join(
        f"| caretz/guard/text_loop.py | stream-text | passed in run {n} |\n" for n in range(60)
    )
    items = "".join(
        f"{n}. Update the loop-guard settings of profile number {n}.\n" for n in range(60)
    )
    answer = readme + "\n" + table + "\n" + items
    server.add(text(answer, chunk_size=40), model=MODEL)

    run = caretz("-p", "describe", *local_route(server), env={"ANTHROPIC_API_KEY": None})

    assert run.code == 0, run.stderr
    assert "[loop-guard]" not in run.stderr
    assert run.stdout.rstrip("\n") == answer.rstrip("\n")


def test_only_the_stream_text_setting_turns_the_cut_off(caretz, server):
    server.add(text(SENTENCE * 60, chunk_size=55), model=MODEL)
    off = '{"mode": "off", "detectors": {"streamText": {"enabled": false}}}'

    run = caretz(
        "-p",
        "hello",
        *local_route(server),
        "--loop-guard-config",
        off,
        env={"ANTHROPIC_API_KEY": None},
    )

    assert run.code == 0, run.stderr
    assert run.stdout.count(SENTENCE) == 60 and "[loop-guard]" not in run.stderr
