"""Images on the wire: each protocol's image block, in a prompt and in a tool result, and
an endpoint's refusal of images as one line."""

from __future__ import annotations

import pytest

from caretz.messages import Image, Message, ModelRequest, ToolCall
from caretz.providers import anthropic, openai, openai_responses
from caretz.providers.anthropic import AnthropicProvider
from caretz.providers.base import ProviderError, collect, refuses_images
from caretz.providers.model_limits import images_refusal, limits_for
from caretz.providers.openai import IMAGES_FOLLOW, OpenAIProvider
from caretz.providers.registry import BUILTIN_PROVIDERS
from tests.modelserver import ModelServer, error, text
from tests.pictures import from_base64, from_data_url, png

SHOT = Image(media_type="image/png", data=png(3, 2), width=3, height=2, source="shot.png")
CHART = Image(
    media_type="image/png", data=png(5, 5, (0, 90, 0)), width=5, height=5, source="chart.png"
)


def conversation() -> list[Message]:
    """A prompt with an image, a reply calling read twice, two results (one an image)."""
    calls = [
        ToolCall(id="call_1", name="read", arguments={"path": "chart.png"}),
        ToolCall(id="call_2", name="read", arguments={}),
    ]
    return [
        Message(role="user", content="what is wrong here?", images=[SHOT]),
        Message(role="assistant", content="", tool_calls=calls),
        Message(
            role="tool",
            content="Image chart.png (PNG, 5×5, 90 bytes)",
            tool_call_id="call_1",
            images=[CHART],
        ),
        Message(role="tool", content="     1\tx", tool_call_id="call_2"),
        Message(role="user", content="and now?"),
    ]


def request() -> ModelRequest:
    return ModelRequest(model="m", system="", messages=conversation())


def test_anthropic_puts_image_blocks_before_the_prompt_and_inside_the_tool_result():
    wire = anthropic.request_body(request())["messages"]
    prompt = wire[0]["content"]
    assert [block["type"] for block in prompt] == ["image", "text"]
    assert prompt[0]["source"]["type"] == "base64"
    assert prompt[0]["source"]["media_type"] == "image/png"
    assert from_base64(prompt[0]["source"]["data"]) == SHOT.data
    assert prompt[1]["text"] == "what is wrong here?"
    image_result, text_result = wire[2]["content"]
    assert image_result["type"] == "tool_result" and image_result["tool_use_id"] == "call_1"
    assert [block["type"] for block in image_result["content"]] == ["text", "image"]
    assert from_base64(image_result["content"][1]["source"]["data"]) == CHART.data
    assert text_result["content"] == "     1\tx"  # a result without images stays text
    assert wire[3] == {"role": "user", "content": "and now?"}


def test_openai_chat_sends_tool_images_in_a_user_message_after_the_tool_messages():
    wire = openai.request_body(request())["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "tool", "user", "user"]
    prompt = wire[0]["content"]
    assert prompt[0] == {"type": "text", "text": "what is wrong here?"}
    assert prompt[1]["type"] == "image_url"
    assert from_data_url(prompt[1]["image_url"]["url"]) == ("image/png", SHOT.data)
    # Tool messages carry text only: the one with an image says it follows.
    assert wire[2]["content"].endswith(IMAGES_FOLLOW) and wire[2]["tool_call_id"] == "call_1"
    assert wire[3]["content"] == "     1\tx"
    label, image = wire[4]["content"]
    assert label == {"type": "text", "text": "The image returned by tool call call_1:"}
    assert from_data_url(image["image_url"]["url"]) == ("image/png", CHART.data)
    assert wire[5] == {"role": "user", "content": "and now?"}


def test_openai_chat_sends_trailing_tool_images_last():
    messages = conversation()[:4]
    wire = openai.request_body(ModelRequest(model="m", system="", messages=messages))["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "tool", "user"]


def test_responses_uses_input_image_in_the_prompt_and_the_function_call_output():
    items = openai_responses.request_body(request())["input"]
    prompt = items[0]["content"]
    assert prompt[0] == {"type": "input_text", "text": "what is wrong here?"}
    assert prompt[1]["type"] == "input_image"
    assert from_data_url(prompt[1]["image_url"]) == ("image/png", SHOT.data)
    output = items[3]
    assert output["type"] == "function_call_output" and output["call_id"] == "call_1"
    assert [part["type"] for part in output["output"]] == ["input_text", "input_image"]
    assert from_data_url(output["output"][1]["image_url"]) == ("image/png", CHART.data)
    assert items[4]["output"] == "     1\tx"


@pytest.mark.parametrize(
    ("model", "sees"),
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("openai/gpt-4o-mini", True),
        ("openai/gpt-5.1", True),
        ("openai/o3", True),
        ("openai/o3-mini", False),
        ("openai/gpt-3.5-turbo", False),
        ("groq/gpt-oss-120b", False),
        ("local/qwen3-coder", None),
    ],
)
def test_the_model_table_says_which_families_see_images(model, sees):
    assert limits_for(model).sees_images is sees
    refusal = images_refusal(model)
    assert (refusal is not None) == (sees is False)
    if refusal:
        assert refusal.startswith(f"model {model} does not take images")


@pytest.mark.parametrize(
    "detail",
    [
        "Invalid content type. image_url is only supported by certain models.",
        "image input is not supported - hint: if this is unexpected, you may need to "
        "provide the mmproj",
        "The model `tiny` is not a multimodal model",
        "llava-less: this model does not support images",
    ],
)
def test_endpoints_refusals_of_images_are_recognized(detail):
    assert refuses_images(detail)


def test_other_errors_are_not_taken_for_image_refusals():
    assert not refuses_images("prompt is too long: 210000 tokens > 200000 maximum")
    assert not refuses_images("image exceeds 5 MB maximum")


def test_a_refused_image_is_one_line_and_not_retried(server: ModelServer):
    server.add(error(400, "Invalid content type. image_url is only supported by certain models."))
    provider = OpenAIProvider(BUILTIN_PROVIDERS["openai"], "sk-test", base_url=server.openai_url)
    try:
        with pytest.raises(ProviderError) as raised:
            collect(
                provider.stream(ModelRequest(model="gpt-x", system="", messages=conversation()))
            )
    finally:
        provider.close()
    assert raised.value.images_refused
    message = str(raised.value)
    assert message.startswith("model 'gpt-x' does not take images: openai answered HTTP 400")
    assert "\n" not in message and len(server.requests) == 1


def test_the_same_error_without_images_is_an_ordinary_failure(server: ModelServer):
    server.add(error(400, "image_url is only supported by certain models"), text("unused"))
    provider = AnthropicProvider(BUILTIN_PROVIDERS["anthropic"], "k", base_url=server.url)
    try:
        with pytest.raises(ProviderError) as raised:
            collect(
                provider.stream(
                    ModelRequest(
                        model="m", system="", messages=[Message(role="user", content="hi")]
                    )
                )
            )
    finally:
        provider.close()
    assert not raised.value.images_refused
