"""The tool specs the model sees, pinned: names, descriptions and JSON schemas,
key order included (it is the order the model reads them in)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from caretz.tools.registry import default_tools

PINNED = Path(__file__).resolve().parents[1] / "data" / "tool_specs.json"


def test_the_built_in_tool_specs_are_exactly_the_pinned_ones():
    specs = [dataclasses.asdict(tool.spec) for tool in default_tools()]

    assert json.dumps(specs, indent=2, ensure_ascii=False) + "\n" == PINNED.read_text()


def test_every_required_argument_is_a_declared_property():
    for tool in default_tools():
        schema = tool.spec.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"]), tool.spec.name
