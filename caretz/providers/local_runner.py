"""The local model server's child process: `python -m caretz.providers.local`.

It serves one GGUF model with llama.cpp (xllamacpp) on a free loopback port,
prints `{"url": …}` (or `{"error": …}`) as one JSON line, and exits when its
stdin closes, which happens however caretz ends.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caretz.lazy import lazy_module

if TYPE_CHECKING:
    import xllamacpp
else:
    # llama.cpp's server, the optional `local` extra: main's first read of it imports it, and
    # its ImportError there is the report that the extra is missing.
    xllamacpp = lazy_module("xllamacpp")


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m caretz.providers.local",
        description="Serve a GGUF model with llama.cpp on a free loopback port "
        "(caretz starts this; it prints its URL as JSON and stops when stdin closes).",
    )
    parser.add_argument("--model", required=True)
    parser.add_argument("--chat-template")
    parser.add_argument("--context-size", type=int)
    parser.add_argument("--threads", type=int)
    return parser.parse_args(argv)


def _report(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def _exit_when_stdin_closes() -> None:
    def watch() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        os._exit(0)  # the server's own threads would keep a normal exit waiting

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def server_params(args: argparse.Namespace) -> Any:
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port; the server reports it
    params.verbosity = 1  # errors only, to stderr
    params.n_parallel = 1  # one request at a time gets the whole context
    if args.context_size is not None:
        params.n_ctx = args.context_size
    if args.threads is not None:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    if args.chat_template:
        params.chat_template = Path(args.chat_template).read_text(encoding="utf-8")
        params.use_jinja = True
    return params


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        serve = xllamacpp.Server  # the first read imports the extra
    except ImportError:
        _report({"error": "not-installed"})
        return 3
    try:
        server = serve(server_params(args))
    except Exception as exc:  # reported to caretz, which shows llama.cpp's own log lines
        _report({"error": str(exc) or type(exc).__name__})
        return 1
    _report({"url": server.listening_address})
    # Nothing else goes to stdout: nobody reads it any more, and a full pipe would block.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    # Started only now, so a failure above is always reported; a caretz that died
    # while the model loaded has closed the pipe already, and this ends at once.
    _exit_when_stdin_closes()
    threading.Event().wait()
    return 0
