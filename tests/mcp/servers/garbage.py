"""An MCP server that answers with garbage: JSON-RPC written by hand over stdio, so it
can send what no SDK would (a lone surrogate, NaN, a key given twice, nesting thousands
deep, a line that is no JSON at all).

    python tests/mcp/servers/garbage.py [LIST]

Its tool `say` answers a call with the garbage its `kind` names (ANSWERS, or `not_json`:
a line that is no JSON, then half a message). LIST names what else the tool list holds:
`surrogate` (a description with a lone surrogate), `deep` (a tool whose schema is nested
thousands deep), `nested` (150 deep), `clean` (nothing else; the default).
"""

from __future__ import annotations

import json
import sys

DEEP = '{"a":' * 3000 + "1" + "}" * 3000
NESTED = '{"type": "object", "properties": {"a": ' + '{"a":' * 150 + "1" + "}" * 151 + "}"
SAY = {
    "name": "say",
    "description": "Answers with the garbage its argument names.",
    "inputSchema": {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "required": ["kind"],
    },
}
LISTS = {
    "clean": [SAY],
    "surrogate": [SAY, {**SAY, "name": "odd", "description": "a lone \ud800 surrogate"}],
    "deep": [SAY, {"name": "deep", "description": "nested too deep", "inputSchema": "DEEP"}],
    "nested": [SAY, {"name": "nested", "description": "150 deep", "inputSchema": "NESTED"}],
}
# The `result` of a tools/call, as JSON text, for each kind.
ANSWERS = {
    "surrogate": '{"content": [{"type": "text", "text": "lone \\udc80 surrogate"}]}',
    "nan": '{"content": [{"type": "text", "text": "n"}], "structuredContent": {"n": NaN}}',
    "twice": '{"content": [{"type": "text", "text": "a"}], "structuredContent": {"k": 1, "k": 2}}',
    "deep": '{"content": [{"type": "text", "text": "d"}], "structuredContent": ' + DEEP + "}",
    "wrong_types": '{"content": [{"type": "text", "text": 5}]}',
    "huge": json.dumps({"content": [{"type": "text", "text": "x" * 3_000_000}]}),
}


def send(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(message_id: object, result: str) -> None:
    send(f'{{"jsonrpc": "2.0", "id": {json.dumps(message_id)}, "result": {result}}}')


def main() -> None:
    tools = LISTS[sys.argv[1] if len(sys.argv) > 1 else "clean"]
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "garbage", "version": "1"}
            answer(
                message_id,
                json.dumps(
                    {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
                ),
            )
        elif method == "tools/list":
            listed = json.dumps({"tools": tools}).replace('"DEEP"', DEEP)
            answer(message_id, listed.replace('"NESTED"', NESTED))
        elif method == "tools/call":
            kind = message["params"]["arguments"].get("kind", "")
            if kind == "not_json":
                send("this line is no JSON at all")
                send('{"jsonrpc": "2.0", "id": ' + json.dumps(message_id) + ', "result": ')
            else:
                answer(message_id, ANSWERS[kind])
        elif message_id is not None:
            send(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": {}}))


if __name__ == "__main__":
    main()
