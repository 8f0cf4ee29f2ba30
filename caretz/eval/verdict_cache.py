"""Judge answers kept on disk, so scoring a judge again costs nothing for what it has.

One JSON line per answer, appended as soon as it arrives (a run stopped with
Ctrl-C keeps every answer it got). An answer is keyed by the exact summary the
judge was shown and by everything that decides how the judge answers: the
model, its endpoint and request defaults, the reasoning setting and the
version of the judge's prompt. Timeouts and connection errors are not kept:
asking again may well get an answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caretz import private_data
from caretz.guard.judge import JUDGE_SYSTEM, VERDICT_SCHEMA
from caretz.guard.model import JudgeResult, Verdict
from caretz.messages import Usage

CACHE_FILE = Path("judge-eval") / "verdicts.jsonl"
UNREADABLE = "unreadable reply"  # a reply that came back but held no verdict: kept too


def prompt_version() -> str:
    """A short digest of the judge's instructions and answer schema."""
    text = JUDGE_SYSTEM + json.dumps(VERDICT_SCHEMA, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cache_key(summary: str, judge_settings: Mapping[str, Any]) -> str:
    payload = json.dumps(
        {"summary": summary, "judge": judge_settings, "prompt": prompt_version()},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def worth_keeping(result: JudgeResult) -> bool:
    return result.error is None or result.error.startswith(UNREADABLE)


class VerdictCache:
    """The answers under `path` (a JSONL file), read once, appended per answer."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._answers: dict[str, JudgeResult] = dict(_read(path))

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, key: str) -> JudgeResult | None:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: str, result: JudgeResult) -> None:
        line = json.dumps({"key": key, **_to_json(result)}) + "\n"
        with self._lock:
            self._answers[key] = result
            private_data.append(self.path, line.encode("utf-8"))


def _read(path: Path) -> list[tuple[str, JudgeResult]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    answers = []
    for line in lines:
        try:
            record = json.loads(line)
            answers.append((str(record["key"]), _from_json(record)))
        except (ValueError, KeyError, TypeError):
            continue  # a line torn by a killed run: that answer is asked again
    return answers


def _to_json(result: JudgeResult) -> dict[str, Any]:
    return {
        "verdict": result.verdict.to_dict(),
        "model": result.model,
        "latency_s": result.latency_s,
        "usage": result.usage.to_dict(),
        "error": result.error,
    }


def _from_json(record: dict[str, Any]) -> JudgeResult:
    verdict = record["verdict"]
    return JudgeResult(
        verdict=Verdict(
            stuck=bool(verdict["stuck"]),
            confidence=float(verdict["confidence"]),
            reason=str(verdict.get("reason") or ""),
            try_instead=str(verdict.get("try_instead") or ""),
        ),
        model=str(record["model"]),
        latency_s=float(record["latency_s"]),
        usage=Usage.from_dict(record.get("usage") or {}),
        error=record.get("error"),
    )
