"""Secrets the table alone missed, through the real CLI: none reaches the judge's request.

The model runs four commands with a password on their command line, and reads eight files
holding secrets of other kinds (an `.npmrc` auth, vendor tokens, a cookie, a `.pgpass`
line, a token of a vendor no table row names); the guard asks the judge every 12 calls,
and the request the scripted server captured holds none of them, in the commands or in
their output. The agent's own model still sees them: only what leaves for the judge is
redacted.
"""

from __future__ import annotations

import json

from tests import secret_corpus
from tests.e2e.test_loop_guard import JUDGE, NOT_STUCK, verdict, with_judge
from tests.modelserver import text, tool


def _case(start: str) -> tuple[str, str]:
    cases = [
        *secret_corpus.SECRETS,
        *secret_corpus.HELD_OUT_SECRETS,
        *secret_corpus.UNNAMED_TOKENS,
    ]
    return next(case for case in cases if case[0].startswith(start))


COMMANDS = [
    _case("cqlsh -u cassandra -p"),
    _case("lftp -u deploy,"),
    _case("sqlplus scott/"),
    _case("mosquitto_pub -h mqtt -u sensor -P"),
]
FILES = [
    _case("_auth="),  # .npmrc
    _case("grafana: glsa_"),
    _case("postman key PMAK-"),
    _case("Set-Cookie: sessionid="),
    _case("define('DB_PASSWORD'"),
    _case("db01.internal:5432:shop:app:"),  # a .pgpass line
    _case("curl -H 'X-Acme-Key: acme_live_"),  # a vendor no table row names
    _case("the service token is"),  # a bare random token in a sentence
]


def test_no_secret_of_the_corpus_reaches_the_judge(caretz, server, workspace):
    for n, (line, _) in enumerate(FILES):
        (workspace / f"conf{n}.txt").write_text(line + "\n")
    calls = [tool("bash", command=line) for line, _ in COMMANDS]
    calls += [tool("bash", command=f"cat conf{n}.txt") for n in range(len(FILES))]
    server.add(*calls, text("done"))
    server.add(verdict(NOT_STUCK), model=JUDGE)

    run = caretz("-p", "check the deploy", *with_judge("shadow"), "--loop-guard-check-every", "12")

    assert run.code == 0, run.stderr
    (judged,) = server.requests_for(JUDGE)
    sent = json.dumps(judged.body)
    assert "cat conf7.txt" in sent and "cqlsh" in sent  # the summary holds the calls
    for line, secret in COMMANDS + FILES:
        assert secret not in sent, line.split(" ", 1)[0]  # what kind, never the value
    assert sent.count("[redacted]") >= len(COMMANDS) + len(FILES)
    agent_saw = json.dumps([request.body for request in server.requests_for("claude-test")])
    assert all(secret in agent_saw for _, secret in FILES)
