"""What finding secrets takes and gives: the table alone, and the table with detect-secrets.

Prints, for each set of tests/secret_cases.py and tests/secret_corpus.py, how many secrets
each redacts and how many look-alikes it changes; how many variables of the corpus's
environments the shell's filter drops; then the costs: importing detect-secrets, redacting
a judge-summary-sized text (the first time, which loads the plugins, and after), and the
environment filter's first pass over an ordinary environment (the table alone) and over
one holding a session cookie (which loads detect-secrets). With --trajectories FILE...
(benchmarks/corpus/*.jsonl), how many places of real agent output each redacts.

    .venv/bin/python benchmarks/secrets.py [--runs 5] [--trajectories FILE ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz.secrets import REDACTED, holds_secret, redact, redact_shapes  # noqa: E402
from tests import secret_cases, secret_corpus  # noqa: E402

Redactor = Callable[[str], str]
_ENV_FIRST_PASS = """
import json, sys, time
from caretz.sandbox.envfilter import EnvFilter
env = json.loads(sys.stdin.read())
started = time.perf_counter()
EnvFilter().apply(env)
print((time.perf_counter() - started) * 1000)
"""


def recall(cases: list[tuple[str, str]], redactor: Redactor) -> str:
    found = sum(secret not in redactor(text) for text, secret in cases)
    return f"{found}/{len(cases)}"


def changed(texts: list[str], redactor: Redactor) -> str:
    return f"{sum(redactor(text) != text for text in texts)}/{len(texts)}"


def print_quality() -> None:
    sets = [
        ("table's own cases", secret_cases.SECRETS, secret_cases.LOOKALIKES),
        ("corpus", secret_corpus.SECRETS, secret_corpus.LOOKALIKES),
        ("held out", secret_corpus.HELD_OUT_SECRETS, secret_corpus.HELD_OUT_LOOKALIKES),
        ("tokens no row names", secret_corpus.UNNAMED_TOKENS, []),
    ]
    print(
        f"{'set':22} {'table: found':>13} {'changed':>8}  {'+ detector: found':>18} {'changed':>8}"
    )
    for name, secrets, lookalikes in sets:
        row = [recall(secrets, redact_shapes), changed(lookalikes, redact_shapes)]
        row += [recall(secrets, redact), changed(lookalikes, redact)]
        print(f"{name:22} {row[0]:>13} {row[1]:>8}  {row[2]:>18} {row[3]:>8}")
    dropped = sum(holds_secret(name, value) for name, value in secret_corpus.ENV_SECRETS)
    kept = sum(not holds_secret(name, value) for name, value in secret_corpus.ENV_ORDINARY)
    print(
        f"environment: {dropped}/{len(secret_corpus.ENV_SECRETS)} secret variables dropped, "
        f"{kept}/{len(secret_corpus.ENV_ORDINARY)} ordinary ones kept"
    )


def subprocess_ms(code: str, runs: int, stdin: str = "") -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], input=stdin, text=True, check=True, cwd=ROOT)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def env_first_pass_ms(env: dict[str, str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _ENV_FIRST_PASS],
            input=json.dumps(env),
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        samples.append(float(out))
    return statistics.median(samples)


def print_costs(runs: int) -> None:
    floor = subprocess_ms("import caretz.secrets", runs)
    imported = subprocess_ms("import caretz.secrets, caretz.secret_detector", runs)
    print(f"{'import detect-secrets':34} {imported - floor:8.1f} ms")
    text = "\n".join([*(case for case, _ in secret_corpus.SECRETS), *secret_corpus.LOOKALIKES])
    text = (text * 4)[:16_000]
    started = time.perf_counter()
    redact(text)
    print(
        f"{'redact 16 KB, first (plugins made)':34} {(time.perf_counter() - started) * 1000:8.1f} ms"
    )
    samples = []
    for n in range(runs):
        started = time.perf_counter()
        redact(text + " " * n)
        samples.append((time.perf_counter() - started) * 1000)
    print(f"{'redact 16 KB, after':34} {statistics.median(samples):8.1f} ms")
    started = time.perf_counter()
    redact_shapes(text + "\n")
    print(f"{'  of which the table':34} {(time.perf_counter() - started) * 1000:8.1f} ms")
    ordinary = dict(secret_corpus.ENV_ORDINARY)
    cookie = {**ordinary, "FASTLANE_SESSION": dict(secret_corpus.ENV_SECRETS)["FASTLANE_SESSION"]}
    print(f"{'env filter, ordinary environment':34} {env_first_pass_ms(ordinary, runs):8.1f} ms")
    print(f"{'env filter, with a session cookie':34} {env_first_pass_ms(cookie, runs):8.1f} ms")


def strings(data: object) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)


def print_trajectories(paths: list[str]) -> None:
    texts = [
        text
        for path in paths
        for line in Path(path).read_text().splitlines()
        for text in strings(json.loads(line))
    ]
    size = sum(map(len, texts)) // 1000
    for name, redactor in (("table", redact_shapes), ("table + detector", redact)):
        places = sum(redactor(text).count(REDACTED) - text.count(REDACTED) for text in texts)
        print(f"{name:18} {places:5} places redacted in {size} KB of agent trajectories")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--trajectories", nargs="*", default=[])
    args = parser.parse_args()
    print_quality()
    print_costs(args.runs)
    if args.trajectories:
        print_trajectories(args.trajectories)


if __name__ == "__main__":
    main()
