"""Images through the real CLI against the loopback model server: `--image`, `@shot.png`
in a prompt, `read` on an image file and an MCP server's image, each as its protocol's
image block (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses) in the
request body the server recorded; resizing, resuming, and the one line a text-only
model or a missing file gets."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Caretz
from tests.e2e.terminal import wrapped
from tests.e2e.test_custom_commands import write_command
from tests.importtime import modules_imported_by_a_run
from tests.mcp.conftest import trouble_server
from tests.modelserver import ModelServer, error, text, tool
from tests.pictures import decoded, from_base64, from_data_url, picture, png

OPENAI = {"OPENAI_API_KEY": "sk-openai-test-0123456789"}
CHAT = {"CARETZ_MODEL": "openai/gpt-4o", **OPENAI}
RESPONSES = {"CARETZ_MODEL": "openai/gpt-5-codex", **OPENAI}
TEXT_ONLY = {"CARETZ_MODEL": "openai/gpt-oss-120b", **OPENAI}


def image_bytes(block: dict[str, Any]) -> tuple[str, bytes]:
    """An Anthropic image block's media type and bytes."""
    assert block["type"] == "image" and block["source"]["type"] == "base64"
    return block["source"]["media_type"], from_base64(block["source"]["data"])


def caretz_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("caretz: ")]


def test_image_flags_send_anthropic_image_blocks_and_the_log_keeps_only_their_digests(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    shot, photo = png(120, 80), picture(64, 64, "JPEG")
    (workspace / "shot.png").write_bytes(shot)
    (workspace / "photo.jpg").write_bytes(photo)
    server.add(text("A red box and a gradient."))

    run = caretz("-p", "what are these?", "--image", "shot.png", "--image", "photo.jpg")

    assert run.code == 0, run.stderr
    first, second, words = server.requests[0].messages[0]["content"]
    assert image_bytes(first) == ("image/png", shot)
    assert image_bytes(second) == ("image/jpeg", photo)
    assert words["type"] == "text" and words["text"] == "what are these?"
    started = next(e for e in caretz.events(run.session_id) if e["type"] == "Turn.Started")
    assert [ref["source"] for ref in started["images"]] == ["shot.png", "photo.jpg"]
    folder = caretz.data_dir / "sessions" / run.session_id
    stored = {path.read_bytes() for path in (folder / "images").iterdir()}
    assert stored == {shot, photo}
    log = (folder / "events.jsonl").read_text()
    assert all(base64.b64encode(data).decode()[:24] not in log for data in (shot, photo))


def test_an_at_mention_attaches_the_image_over_chat_completions(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    shot = png(10, 10, (0, 0, 255))
    (workspace / "shot.png").write_bytes(shot)
    server.add(text("Blue."))

    run = caretz("-p", "what colour is @shot.png?", env=CHAT)

    assert run.code == 0, run.stderr
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    words, image = request.messages[-1]["content"]
    assert words == {"type": "text", "text": "what colour is @shot.png?"}
    assert image["type"] == "image_url"
    assert from_data_url(image["image_url"]["url"]) == ("image/png", shot)


def test_responses_takes_input_image_in_the_prompt_and_in_a_read_result(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    shot, chart = png(8, 8), picture(30, 20, "WEBP")
    (workspace / "shot.png").write_bytes(shot)
    (workspace / "chart.webp").write_bytes(chart)
    server.add(tool("read", path="chart.webp"), text("They differ."))

    run = caretz("-p", "compare @shot.png with chart.webp", env=RESPONSES)

    assert run.code == 0, run.stderr
    first, second = server.requests
    assert first.path == "/v1/responses"
    prompt = first.input[0]["content"]
    assert prompt[0] == {"type": "input_text", "text": "compare @shot.png with chart.webp"}
    assert prompt[1]["type"] == "input_image"
    assert from_data_url(prompt[1]["image_url"]) == ("image/png", shot)
    [output] = [item for item in second.input if item.get("type") == "function_call_output"]
    words, image = output["output"]
    assert words["type"] == "input_text" and words["text"].startswith("Image chart.webp (WebP")
    assert from_data_url(image["image_url"]) == ("image/webp", chart)


def test_read_scales_a_large_image_down_inside_the_anthropic_tool_result(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "big.png").write_bytes(png(3000, 2000))
    server.add(tool("read", path="big.png"), text("A large red image."))

    run = caretz("-p", "describe big.png")

    assert run.code == 0, run.stderr
    [result] = [b for b in server.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    words, image = result["content"]
    assert "PNG, 3000×2000" in words["text"] and "resized to PNG 1568×1045" in words["text"]
    media_type, data = image_bytes(image)
    assert media_type == "image/png" and decoded(data).size == (1568, 1045)
    logged = next(e for e in caretz.events(run.session_id) if e["type"] == "Tool.Result")
    assert [(r["width"], r["height"]) for r in logged["images"]] == [(1568, 1045)]


def test_chat_completions_sends_a_read_image_in_a_user_message_after_the_tool_message(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    photo = picture(40, 30, "JPEG")
    (workspace / "photo.jpg").write_bytes(photo)
    server.add(tool("read", path="photo.jpg"), text("A gradient."))

    run = caretz("-p", "what is in photo.jpg?", env=CHAT)

    assert run.code == 0, run.stderr
    *_, result, shown = server.requests[1].messages
    assert result["role"] == "tool" and result["content"].startswith("Image photo.jpg (JPEG")
    assert "follows in the next user message" in result["content"]
    label, image = shown["content"]
    assert shown["role"] == "user" and label["text"].startswith("The image returned by tool call")
    assert from_data_url(image["image_url"]["url"]) == ("image/jpeg", photo)


def test_continue_sends_the_earlier_turns_image_again(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    shot = png(16, 16, (10, 200, 10))
    (workspace / "shot.png").write_bytes(shot)
    server.add(text("Green."), text("It was green."))
    first = caretz("-p", "remember this", "--image", "shot.png")
    assert first.code == 0, first.stderr
    (workspace / "shot.png").unlink()  # the session keeps its own copy

    later = caretz("-c", "-p", "what colour was it?")

    assert later.code == 0, later.stderr
    earlier_prompt = server.requests[1].messages[0]["content"]
    assert image_bytes(earlier_prompt[0]) == ("image/png", shot)
    assert server.requests[1].messages[-1]["content"] == "what colour was it?"


def test_a_missing_or_hidden_image_is_one_line_and_nothing_is_sent(
    caretz: Caretz, server: ModelServer, tmp_path: Path
):
    missing = caretz("-p", "look at @nothere.png")
    assert missing.code == 2
    assert caretz_lines(missing.stderr) == [
        "caretz: cannot attach @nothere.png: there is no file nothere.png (nothing was sent)"
    ]
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "qr.png").write_bytes(png(4, 4))

    hidden = caretz("-p", "read @~/.ssh/qr.png", env={"HOME": str(home)})

    assert hidden.code == 2
    [line] = caretz_lines(hidden.stderr)
    assert line.startswith("caretz: cannot attach @~/.ssh/qr.png: cannot read ~/.ssh/qr.png")
    assert "hidden" in line
    assert server.requests == []
    as_json = caretz("-p", "look at @nothere.png", "--output", "json")
    assert as_json.code == 2
    result = json.loads(as_json.stdout.splitlines()[-1])
    assert (result["status"], result["session_id"]) == ("usage_error", None)
    # Refused before anything was sent, none of the three runs left a session behind.
    assert caretz("sessions", "list").stdout.startswith("no sessions yet")
    assert not any((caretz.data_dir / "sessions").iterdir())


def test_a_text_only_model_gets_one_line_before_any_request(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "shot.png").write_bytes(png(4, 4))

    run = caretz("-p", "what is this?", "--image", "shot.png", env=TEXT_ONLY)

    assert run.code == 2
    assert caretz_lines(run.stderr) == [
        "caretz: model openai/gpt-oss-120b does not take images (caretz's model table knows "
        "it as text-only): --image shot.png cannot be sent (nothing was sent)"
    ]
    assert server.requests == []


def test_a_text_only_models_read_of_an_image_fails_with_the_reason(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "shot.png").write_bytes(png(4, 4))
    server.add(tool("read", path="shot.png"), text("I cannot see it."))

    run = caretz("-p", "what is in shot.png?", env=TEXT_ONLY)

    assert run.code == 0, run.stderr
    result = server.requests[1].messages[-1]
    assert result["role"] == "tool"
    assert result["content"].endswith(
        "not shown: model openai/gpt-oss-120b does not take images "
        "(caretz's model table knows it as text-only)"
    )
    assert "image_url" not in str(server.requests[1].body)


def test_an_endpoints_refusal_of_images_is_one_line_with_exit_2(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "shot.png").write_bytes(png(4, 4))
    server.add(error(400, "Invalid content type. image_url is only supported by certain models."))

    run = caretz(
        "-p",
        "what is this?",
        "--image",
        "shot.png",
        env={**CHAT, "CARETZ_MODEL": "openai/my-text-model"},
    )

    assert run.code == 2
    assert len(server.requests) == 1  # not retried
    assert "model 'my-text-model' does not take images: openai answered HTTP 400" in run.stderr
    ended = next(e for e in caretz.events(run.session_id) if e["type"] == "Turn.Ended")
    assert ended["exit_code"] == 2 and ended["status"] == "error"


def test_an_mcp_servers_screenshot_reaches_the_model_as_an_image(
    caretz: Caretz, server: ModelServer
):
    caretz.write_config(
        {
            "profiles": {
                "general": {
                    "mcpServers": {"trouble": trouble_server()},
                    "permissions": {"allow": ["mcp__trouble__screenshot"]},
                }
            }
        }
    )
    server.add(tool("mcp__trouble__screenshot", width=2000, height=1000), text("A blue page."))

    run = caretz("-p", "take a screenshot")

    assert run.code == 0, run.stderr
    [result] = [b for b in server.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    words, image = result["content"]
    assert words["text"].startswith("2000x1000 screenshot\n[image: PNG, 2000×1000")
    media_type, data = image_bytes(image)
    assert media_type == "image/png" and decoded(data).size == (1568, 784)
    assert decoded(data).convert("RGB").getpixel((5, 5)) == (30, 90, 200)


def test_a_custom_commands_image_file_goes_with_its_prompt(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    shot = png(6, 6)
    (workspace / "shot.png").write_bytes(shot)
    write_command(workspace / ".caretz" / "commands", "look", "What is wrong in @shot.png?")
    server.add(text("Nothing."))

    run = caretz("-p", "/look")

    assert run.code == 0, run.stderr
    image, words = server.requests[0].messages[0]["content"]
    assert image_bytes(image) == ("image/png", shot)
    assert words["text"].startswith('What is wrong in @shot.png?\n\n<file path="shot.png">')


def test_the_interactive_session_attaches_images_and_says_why_one_cannot_be(
    terminal, server: ModelServer, workspace: Path
):
    shot, flagged = png(12, 12), png(7, 7, (0, 0, 0))
    (workspace / "shot.png").write_bytes(shot)
    (workspace / "flagged.png").write_bytes(flagged)
    server.add(text("A red square."), text("Same one."))
    term = terminal("--image", "flagged.png")

    term.type("look at @missing.png")
    term.expect(wrapped("cannot attach @missing.png: there is no file missing.png"))
    term.type("what is @shot.png?")  # the flag's image goes with the first prompt sent
    term.expect("attached flagged.png, shot.png")
    term.expect("A red square.")
    term.type("and again?")
    term.expect("Same one.")
    term.ctrl_d()

    first, second = server.requests
    images = [image_bytes(block)[1] for block in first.messages[0]["content"][:-1]]
    assert images == [flagged, shot]
    assert second.messages[-1]["content"] == "and again?"  # nothing attached a second time


def test_an_image_within_the_caps_never_loads_pillow(
    caretz: Caretz, server: ModelServer, workspace: Path
):
    (workspace / "shot.png").write_bytes(png(200, 100))
    server.add(text("hi"))

    loaded = modules_imported_by_a_run(workspace, caretz.environment(), "--image", "shot.png")

    assert "caretz.tools.image_fit" in loaded and len(server.requests) == 1
    assert not {name for name in loaded if name == "PIL" or name.startswith("PIL.")}
