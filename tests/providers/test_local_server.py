"""Starting, sharing and stopping local model servers, with a stand-in for llama.cpp.

The stand-in is a real child process speaking the runner's protocol (a JSON line
with the URL, /health, exit when stdin closes); what it does is chosen by the
model file's name: ok, fail, die, missing, hang, deaf (ignores its stdin) or
stubborn (ignores its stdin and SIGTERM).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from caretz.providers.entry import LocalModel
from caretz.providers.local import (
    INSTALL_HINT,
    LocalServers,
    builtin_template_path,  # docs/local-models.md imports it from here
    not_installed_message,
)
from caretz.providers.local_spec import (
    BUILTIN_TEMPLATE,
    LocalServerError,
    LocalServerSpec,
    display_path,
    server_spec,
)
from caretz.providers.registry import BUILTIN_PROVIDERS

STAND_IN = r"""
import json, os, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = sys.argv[1:]
model = args[args.index("--model") + 1]
mode = os.path.basename(model).split(".")[0]
with open(model + ".run", "w") as record:
    json.dump({"argv": args, "pid": os.getpid()}, record)

if mode == "fail":
    sys.stderr.write("0.00.004.877 I llama_model_loader: loaded meta data\n")
    sys.stderr.write("0.00.004.900 E llama_model_load: tensor 'blk.0' is out of bounds\n")
    sys.stderr.write("0.00.005.246 E srv  init: exiting due to model loading error\n")
    sys.stderr.flush()
    print(json.dumps({"error": "Failed to init server"}), flush=True)
    sys.exit(1)
if mode == "die":
    sys.stderr.write("Segmentation fault\n")
    sys.exit(7)
if mode == "missing":
    print(json.dumps({"error": "not-installed"}), flush=True)
    sys.exit(3)
if mode == "hang":
    sys.stdin.buffer.read()
    sys.exit(0)

asked = []

class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        asked.append(self.path)
        self.send_response(503 if len(asked) == 1 else 200)  # still loading, then ready
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}"}), flush=True)
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode in ("deaf", "stubborn"):
    while True:
        time.sleep(1)
sys.stdin.buffer.read()  # caretz closed the pipe: stop
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> str:
    """An executable that takes the place of `python` and runs the stand-in server."""
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    launcher = tmp_path / "python"
    launcher.write_text(f'#!/bin/sh\nshift 2\nexec "{sys.executable}" "{script}" "$@"\n')
    launcher.chmod(0o755)
    return str(launcher)


@pytest.fixture
def models(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    for mode in ("ok", "fail", "die", "missing", "hang", "deaf", "stubborn"):
        (folder / f"{mode}.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    return folder


@pytest.fixture
def progress() -> list[str]:
    return []


@pytest.fixture
def servers(stand_in: str, progress: list[str]) -> Iterator[LocalServers]:
    ticks = iter(float(n) for n in range(100))
    pool = LocalServers(progress=progress.append, python=stand_in, clock=lambda: next(ticks))
    yield pool
    pool.close()


def local_entry(model: Path, protocol: str = "openai", **local: object):
    spec = LocalModel(model=str(model), **local)  # type: ignore[arg-type]
    return dataclasses.replace(BUILTIN_PROVIDERS["local"], protocol=protocol, local=spec)


def run_record(model: Path) -> dict[str, object]:
    return json.loads(Path(f"{model}.run").read_text())


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# ----------------------------------------------------------------- the pool


def test_attach_starts_one_server_that_both_protocols_share(servers, models, progress):
    model = models / "ok.gguf"
    options = {"chat_template": BUILTIN_TEMPLATE, "context_size": 2048, "threads": 2}

    openai = servers.attach(local_entry(model, **options), "ignored")
    anthropic = servers.attach(local_entry(model, "anthropic", **options), "ignored")

    (server,) = servers.servers
    assert openai.base_url == server.url + "/v1" and openai.local is None
    assert anthropic.base_url == server.url and anthropic.protocol == "anthropic"
    assert server.url.startswith("http://127.0.0.1:")
    assert run_record(model)["argv"] == [
        "--model", str(model), "--chat-template", str(builtin_template_path()),
        "--context-size", "2048", "--threads", "2",
    ]  # fmt: skip
    assert progress == [f"caretz: loading {display_path(model)}… ", "ready in 1.0s\n"]


def test_close_ends_the_child_through_its_stdin(servers, models):
    servers.attach(local_entry(models / "ok.gguf"), "m")
    (server,) = servers.servers

    servers.close()

    assert server.process.returncode == 0  # it ended itself; nothing had to be killed
    assert servers.servers == []


@pytest.mark.parametrize(("mode", "ended_by"), [("deaf", -15), ("stubborn", -9)])
def test_a_child_that_ignores_its_stdin_is_terminated_then_killed(servers, models, mode, ended_by):
    servers.attach(local_entry(models / f"{mode}.gguf"), "m")
    (server,) = servers.servers

    server.stop(grace_s=0.2)

    assert server.process.returncode == ended_by


def test_a_dead_server_is_started_again(servers, models):
    entry = local_entry(models / "ok.gguf")
    servers.attach(entry, "m")
    first = servers.servers[0]
    first.stop()

    servers.attach(entry, "m")

    assert servers.servers[0].pid != first.pid and servers.servers[0].running()


def test_the_model_id_is_the_path_when_the_section_names_no_file(servers, models):
    model = models / "ok.gguf"

    attached = servers.attach(BUILTIN_PROVIDERS["local"], str(model))

    assert attached.local is None and attached.name == "local"
    assert run_record(model)["argv"] == ["--model", str(model)]


def test_a_failed_load_reports_llamas_own_error_lines(servers, models, progress):
    with pytest.raises(LocalServerError) as caught:
        servers.attach(local_entry(models / "fail.gguf"), "m")

    assert str(caught.value) == (
        f"llama.cpp could not start {display_path(models / 'fail.gguf')}: llama_model_load: tensor "
        "'blk.0' is out of bounds; srv  init: exiting due to model loading error"
    )
    assert progress[-1] == "failed\n" and servers.servers == []


def test_a_crash_while_loading_reports_the_exit_code(servers, models):
    with pytest.raises(LocalServerError, match="exited with code 7: Segmentation fault"):
        servers.attach(local_entry(models / "die.gguf"), "m")


def test_a_child_without_llama_cpp_says_how_to_install_it(servers, models):
    with pytest.raises(LocalServerError) as caught:
        servers.attach(local_entry(models / "missing.gguf"), "m")
    assert str(caught.value) == not_installed_message()
    assert INSTALL_HINT in str(caught.value)


def test_a_load_that_takes_too_long_is_stopped(servers, models):
    model = models / "hang.gguf"
    with pytest.raises(LocalServerError, match="did not load within 0.3s"):
        servers.attach(local_entry(model, load_timeout_s=0.3), "m")
    assert not pid_alive(int(run_record(model)["pid"]))  # type: ignore[call-overload]


def test_without_xllamacpp_nothing_is_started(models, progress):
    pool = LocalServers(progress=progress.append, python="/nonexistent", find_spec=lambda _: None)

    with pytest.raises(LocalServerError) as caught:
        pool.attach(local_entry(models / "ok.gguf"), "m")

    assert str(caught.value) == (
        "local models need llama.cpp's server (xllamacpp), which is not installed: "
        "pip install 'caretz[local]'"
    )
    assert progress == []


def test_an_entry_without_a_local_section_is_returned_as_it_is(servers):
    entry = BUILTIN_PROVIDERS["ollama"]
    assert servers.attach(entry, "qwen3") is entry and servers.servers == []


# ----------------------------------------------------------------- the spec


def test_spec_resolves_relative_paths_from_the_working_folder(models):
    spec = server_spec(LocalModel(), "ok.gguf", cwd=models)
    assert spec == LocalServerSpec(models / "ok.gguf")


def test_spec_refuses_a_missing_model_file(tmp_path: Path):
    with pytest.raises(LocalServerError, match=f"model file {tmp_path / 'nope.gguf'} does not"):
        server_spec(LocalModel(), "nope.gguf", cwd=tmp_path)


def test_spec_refuses_a_file_that_is_not_gguf(tmp_path: Path):
    (tmp_path / "model.bin").write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(LocalServerError, match="is not a GGUF model file"):
        server_spec(LocalModel(), "model.bin", cwd=tmp_path)


def test_spec_refuses_a_missing_template(models):
    with pytest.raises(LocalServerError, match="chat template .*mine.jinja does not exist"):
        server_spec(LocalModel(chat_template="mine.jinja"), "ok.gguf", cwd=models)


def test_the_shipped_template_is_in_the_package_and_has_a_tool_call_block(models):
    spec = server_spec(LocalModel(chat_template=BUILTIN_TEMPLATE), "ok.gguf", cwd=models)
    assert spec.chat_template == builtin_template_path()
    template = builtin_template_path().read_text()
    for needed in ("<|im_start|>", "<tool_call>", "</tool_call>", "<tool_response>", "tools"):
        assert needed in template


# ----------------------------------------------------------------- the runner itself


def test_the_runner_reports_a_missing_xllamacpp(tmp_path: Path):
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "xllamacpp.py").write_text("raise ImportError('No module named xllamacpp')\n")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(root)])}

    done = subprocess.run(
        [sys.executable, "-m", "caretz.providers.local", "--model", "x.gguf"],
        env=env,
        input=b"",
        capture_output=True,
        timeout=60,
    )

    assert done.returncode == 3
    assert json.loads(done.stdout) == {"error": "not-installed"}
