"""A stdio server boots while the MCP SDK loads: its process is running before the SDK's
first module is imported, and the connection then speaks to that process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.mcp.conftest import STARTUP_ROOM

REPO = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter (nothing of the SDK loaded yet): an import hook notes the
# processes this one has started at the moment the SDK's `mcp` package is first imported.
PROBE = """
import json, os, sys
from caretz.config_base import parse_duration
from caretz.mcp_client.manager import McpManager
from caretz.mcp_client.model import ServerSpec

def children():
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and int(fields[1]) == os.getpid():
            found.append(command)
    return found

at_import = []

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" and not at_import:
            at_import.append(children())
        return None

sys.meta_path.insert(0, Watch())
spec = ServerSpec(
    name="time", source="test", transport="stdio", command=sys.executable, args=("-m", "mcp_server_time"),
    env={"PATH": os.environ["PATH"]},
)
manager = McpManager()
[attempt] = manager.start([spec], parse_duration(sys.argv[1]))
print(json.dumps({"at_import": at_import[0], "error": attempt.error,
                  "tools": [tool.name for tool in attempt.tools]}))
manager.close()
"""


def test_a_stdio_server_is_running_before_the_sdk_is_imported():
    done = subprocess.run(
        [sys.executable, "-c", PROBE, STARTUP_ROOM],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )

    seen = json.loads(done.stdout)
    assert seen["error"] is None
    assert "get_current_time" in seen["tools"]
    assert any("mcp_server_time" in command for command in seen["at_import"]), seen
