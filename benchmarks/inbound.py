"""What reading outside data strictly and keeping the data dir private cost.

Prints:
  stream chunks     a reply's SSE chunks (8,000 tokens of text, a 100 KB tool call) read by
                    json.loads and by inbound.load_json (depth, NaN, duplicate keys,
                    surrogates checked), per chunk, and the ratio
  tool arguments    one 100 KB call's arguments: json.loads, inbound.tool_arguments
  event log         EventLog.emit of a 2 KB tool result: valid text, and text with a lone
                    surrogate (the line repaired and the record read back)
  endless reply     a loopback server streaming text without end to the Anthropic
                    provider (max_tokens 32,000): characters read and seconds until caretz
                    stops it as a max_tokens stop
  data dir at start private_root on a data dir an older caretz left open (N files, 0644
                    in 0755 folders), then on the same dir once private

    .venv/bin/python benchmarks/inbound.py [--files 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from caretz import inbound, private_data  # noqa: E402
from caretz.messages import ModelRequest  # noqa: E402
from caretz.providers.anthropic import AnthropicProvider  # noqa: E402
from caretz.providers.base import Completed  # noqa: E402
from caretz.providers.registry import BUILTIN_PROVIDERS  # noqa: E402
from caretz.session.events import EventLog  # noqa: E402
from caretz.session.records.loop import ToolReturned  # noqa: E402
from tests.modelserver import ModelServer, Reply, _Call, _Rendered, anthropic_events  # noqa: E402


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def stream_chunks() -> None:
    arguments = json.dumps({"path": "a.py", "content": "x = 1\n" * 17_000})
    reply = Reply(text="word " * 8000, chunk_size=20)
    rendered = _Rendered(reply, "m", [_Call("call_1", "write", arguments)])
    chunks = [json.dumps(payload) for _, payload in anthropic_events(rendered)]
    plain = best_of(5, lambda: [json.loads(chunk) for chunk in chunks])
    strict = best_of(5, lambda: [inbound.load_json(chunk) for chunk in chunks])
    per = 1e6 / len(chunks)
    print(
        f"stream chunks     {len(chunks):,} chunks: json.loads {plain * per:.1f} µs, "
        f"inbound {strict * per:.1f} µs a chunk ({strict / plain:.2f}x)"
    )
    plain = best_of(20, lambda: json.loads(arguments))
    strict = best_of(20, lambda: inbound.tool_arguments(arguments))
    print(
        f"tool arguments    {len(arguments) // 1024} KB: json.loads {plain * 1e3:.2f} ms, "
        f"inbound {strict * 1e3:.2f} ms ({strict / plain:.2f}x)"
    )


def event_log(folder: Path) -> None:
    log = EventLog(folder / "events.jsonl")
    clean = ToolReturned(index=0, call_id="c", name="bash", ok=True, output="é" * 2048)
    broken = ToolReturned(index=0, call_id="c", name="bash", ok=True, output="\ud800" * 2048)
    count = 2000
    fast = best_of(3, lambda: [log.emit(clean) for _ in range(count)]) / count
    slow = best_of(3, lambda: [log.emit(broken) for _ in range(count)]) / count
    log.close()
    print(f"event log         emit: {fast * 1e6:.1f} µs valid, {slow * 1e6:.1f} µs repaired")


def endless_reply() -> None:
    with ModelServer() as server:
        server.add(Reply(text="all work and no play makes jack " * 4, endless_text=True))
        entry = BUILTIN_PROVIDERS["anthropic"]
        provider = AnthropicProvider(entry, "sk-ant-bench", base_url=server.url, max_retries=0)
        request = ModelRequest(model="claude-bench", system="", messages=[], max_tokens=32_000)
        started = time.perf_counter()
        done = next(e for e in provider.stream(request) if isinstance(e, Completed))
        took = time.perf_counter() - started
        provider.close()
    text = done.response.message.content
    print(
        f"endless reply     stopped after {len(text):,} characters in {took:.2f} s "
        f"(stop: {done.response.stop_reason}; bound {32_000 * 16 + 64 * 1024:,})"
    )


def data_dir_at_start(folder: Path, files: int) -> None:
    root = folder / "data"
    for number in range(files):
        sub = root / "checkpoints" / "p" / "git" / "objects" / f"{number % 256:02x}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{number:038x}").write_bytes(b"x")
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    first = best_of(1, lambda: private_data.private_root(root))
    again = best_of(5, lambda: private_data.private_root(root))
    print(
        f"data dir at start {files:,} files: closed in {first * 1e3:.0f} ms once, "
        f"then {again * 1e6:.0f} µs a start"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f}")
    stream_chunks()
    with tempfile.TemporaryDirectory() as scratch:
        event_log(Path(scratch))
        endless_reply()
        data_dir_at_start(Path(scratch), args.files)
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
