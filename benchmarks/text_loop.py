"""The answer-loop check (caretz/guard/text_loop.py) on real text: what it cuts that it
should not, and how soon it cuts a reply that repeats one sentence.

Streams each text in 7-character pieces (as the scripted server does) through the check
with its default settings, and through the rule it replaced (a unit had to be at least
`minPeriod` characters and its own shortest period, so a shorter sentence never looped):

- false cuts on real text: the repository's README and docs/*.md, the corpus's README,
  and from benchmarks/corpus/*.jsonl the task texts, the models' rejected replies
  (`format_error` steps) and every tool output (program output, which a model may quote);
- loops: each sentence of the README, repeated 40 times after an opening line; and the
  reply the 135M test model gave to "What is in this folder?" (one list item, again and
  again). For each: cut or not, and the characters streamed before the cut.

    .venv/bin/python benchmarks/text_loop.py [FILE ...]   # extra text files to stream
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from caretz.guard import text_loop  # noqa: E402
from caretz.guard.text_loop import TextLoopSettings, TextLoopWatch  # noqa: E402

CHUNK = 7
CORPUS = REPO / "benchmarks" / "corpus"
SMOLLM_REPLY = (
    "This folder contains files that are part of the user's environment.\n\n"
    "The main files include:\n\n- `READS/README.txt` \n- `README.md` \n- `README.xml`\n"
    "- `CACHE/CACHE.config`\n- `FOCUS/FOCUS.yml` \n- `FONT_HOME/FONT_HOME.png`\n"
    + "- `FONT_WEB/FONT_WEB.png`\n"
    * 40
)


def previous_rule(text: str, min_period: int, repeats: int) -> str | None:
    """The rule before: a unit of at least `min_period`, its own shortest period."""
    size = len(text)
    if size < min_period * repeats:
        return None
    probe = text[size - min_period :]
    start = text.rfind(probe, 0, size - 1)
    for _ in range(64):
        if start < 0:
            return None
        period = size - min_period - start
        if period * repeats > size:
            return None
        unit = text[size - period :]
        primitive = (unit + unit).find(unit, 1) == period
        if period >= min_period and primitive and text.endswith(unit * repeats):
            return unit
        start = text.rfind(probe, 0, start + min_period - 1)
    return None


def first_cut(text: str) -> int | None:
    """Characters streamed when the check cut the text; None: it ran to its end."""
    watch = TextLoopWatch(TextLoopSettings())
    for end in range(0, len(text), CHUNK):
        if watch.feed(text[end : end + CHUNK]) is not None:
            return min(end + CHUNK, len(text))
    return None


def with_rule(rule: Callable[[str, int, int], str | None], text: str) -> int | None:
    saved = text_loop.repeated_tail
    text_loop.repeated_tail = rule  # type: ignore[assignment]
    try:
        return first_cut(text)
    finally:
        text_loop.repeated_tail = saved


def real_texts(extra: Iterable[Path]) -> list[tuple[str, str, str]]:
    """(set, name, text) for every real text measured."""
    texts = [("docs", "README.md", (REPO / "README.md").read_text())]
    texts += [("docs", f"docs/{p.name}", p.read_text()) for p in sorted(REPO.glob("docs/*.md"))]
    texts.append(("docs", "benchmarks/corpus/README.md", (CORPUS / "README.md").read_text()))
    texts += [("extra", str(p), p.read_text(errors="replace")) for p in extra]
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            texts.append(("tasks", record["id"], record["task"]))
            for n, step in enumerate(record["steps"]):
                name = f"{record['id']}#{n}"
                if step["tool"] == "format_error":
                    reply = (step.get("args") or {}).get("response_tail") or ""
                    texts.append(("model replies", name, reply))
                if step.get("output"):
                    texts.append(("tool outputs", name, step["output"]))
    return texts


def main(argv: list[str]) -> int:
    texts = real_texts(Path(a) for a in argv)
    print("False cuts on real text (7-character pieces, default streamText settings):")
    print(f"{'set':15} {'texts':>6} {'chars':>10} {'cut now':>8} {'cut before':>11}")
    cut_now: list[str] = []
    for name in dict.fromkeys(s for s, _, _ in texts):
        group = [(n, t) for s, n, t in texts if s == name]
        now = [n for n, t in group if first_cut(t) is not None]
        before = [n for n, t in group if with_rule(previous_rule, t) is not None]
        chars = sum(len(t) for _, t in group)
        print(f"{name:15} {len(group):6} {chars:10,} {len(now):8} {len(before):11}")
        cut_now += [f"{name}: {n}" for n in now]
    for item in cut_now:
        print(f"  cut now: {item}")
    readme = (REPO / "README.md").read_text()
    sentences = sorted(
        {s.strip() + " " for s in re.split(r"(?<=[.!?])\s+", readme) if len(s.strip()) >= 10}
    )
    loops = [("Sure, here it is.\n" + s * 40, len(s)) for s in sentences]
    caught_now = [first_cut(t) for t, _ in loops]
    caught_before = [with_rule(previous_rule, t) for t, _ in loops]
    short = [i for i, (_, size) in enumerate(loops) if size < 50]
    print(f"\nLoops: {len(loops)} README sentences ({len(short)} under 50 characters), 40× each:")
    for label, cuts in (("now", caught_now), ("before", caught_before)):
        done = [c for c in cuts if c is not None]
        short_done = sum(cuts[i] is not None for i in short)
        worst = max(done) if done else 0
        print(
            f"  {label:7} cut {len(done)} of {len(loops)} ({short_done} of {len(short)} short); "
            f"at most {worst:,} characters streamed before the cut"
        )
    missed = [s for s, cut in zip(sentences, caught_now, strict=True) if cut is None]
    window = text_loop.WINDOW
    fenced = sum("```" in s and len(s) * 20 > window for s in missed)
    long = sum("```" not in s and len(s) * 5 > window for s in missed)
    print(
        f"  not cut now: {fenced} hold a code fence and are over {window // 20:,} characters "
        f"(20 repeats exceed the {window:,}-character window), {long} over {window // 5:,} "
        f"(5 repeats exceed it), {len(missed) - fenced - long} other"
    )
    smol_now, smol_before = first_cut(SMOLLM_REPLY), with_rule(previous_rule, SMOLLM_REPLY)
    print(
        f"\nThe 135M test model's reply ({len(SMOLLM_REPLY):,} characters, one 26-character "
        f"item again and again): now cut after {smol_now} characters; before: "
        f"{'cut after ' + str(smol_before) if smol_before else 'never cut'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
