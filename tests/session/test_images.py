"""A session's images: stored once beside the log, named by digest in its events, and
read back when the conversation is rebuilt."""

from __future__ import annotations

from pathlib import Path

from caretz.messages import Image, Message
from caretz.session.events import EventLog, read_events
from caretz.session.images import ImageFiles
from caretz.session.records.loop import ModelReplied, ToolReturned, TurnStarted
from caretz.session.records.session import SessionCompacted
from caretz.session.store import read_history
from tests.pictures import png

SHOT = Image(media_type="image/png", data=png(40, 30), width=40, height=30, source="shot.png")


def logged_session(folder: Path) -> EventLog:
    """A turn whose prompt has an image and whose read returned the same image again."""
    log = EventLog(folder / "events.jsonl")
    log.keep_images([SHOT])
    log.emit(TurnStarted(turn=1, agent="main", prompt="look", images=[SHOT.ref()]))
    reply = Message(role="assistant", content="", tool_calls=[])
    log.emit(ModelReplied(agent="main", message=reply.to_dict()))
    log.keep_images([SHOT])
    log.emit(
        ToolReturned(agent="main", call_id="call_1", ok=True, output="Image", images=[SHOT.ref()])
    )
    log.close()
    return log


def test_an_image_is_stored_once_and_the_log_names_it_by_digest(tmp_path):
    logged_session(tmp_path)

    files = sorted((tmp_path / "images").iterdir())
    assert [path.name for path in files] == [f"{SHOT.sha256}.png"]
    assert files[0].read_bytes() == SHOT.data
    log = (tmp_path / "events.jsonl").read_text()
    assert SHOT.base64()[:40] not in log  # no bytes in the log
    started = next(e for e in read_events(tmp_path / "events.jsonl") if isinstance(e, TurnStarted))
    assert started.images == [SHOT.ref()]


def test_the_rebuilt_conversation_has_its_images_back(tmp_path):
    logged_session(tmp_path)

    conversation = read_history(tmp_path / "events.jsonl").conversation

    prompt, _, result = conversation
    assert prompt.content == "look" and prompt.images == [SHOT]
    assert result.role == "tool" and result.images == [SHOT]
    assert result.images[0].source == "shot.png" and result.images[0].width == 40


def test_a_missing_or_altered_image_file_is_named_instead(tmp_path):
    logged_session(tmp_path)
    stored = ImageFiles(tmp_path).path(SHOT.sha256, SHOT.media_type)
    stored.write_bytes(SHOT.data + b"tampered")

    prompt, _, result = read_history(tmp_path / "events.jsonl").conversation

    assert prompt.images == [] and result.images == []
    assert prompt.content == "look\n[image not available any more: shot.png]"
    stored.unlink()
    assert read_history(tmp_path / "events.jsonl").conversation[0].images == []


def test_a_compacted_conversation_keeps_its_images(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    log.keep_images([SHOT])
    kept = [
        Message(role="user", content="summary"),
        Message(role="user", content="look", images=[SHOT]),
    ]
    log.emit(SessionCompacted(agent="main", conversation=[m.to_dict() for m in kept]))
    log.close()

    _, prompt = read_history(tmp_path / "events.jsonl").conversation

    assert prompt.images == [SHOT]
