"""Where an HTTP MCP server's OAuth login is kept: one file per server URL in caretz's
data dir, `mcp-oauth/<hash of the URL>.json`, 0600 in a 0700 folder (caretz/private_data.py),
which sandboxed commands cannot see.

A file holds the server's URL, its tokens and when the access token expires (a time, not
the `expires_in` the server sent, so a later session knows it has expired), the client
registration and the authorization server's metadata (where to refresh). Its content is
never printed or logged: caretz names the file, never what is in it. The SDK's side of
it (its TokenStorage) is mcp_client/oauth.py's; this module does not import the SDK, so
`caretz mcp logout` and the session's start read it without the SDK.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from caretz import inbound, private_data

TOKENS_DIR = "mcp-oauth"  # under the data dir
MAX_FILE_BYTES = 1 << 20


class TokenStore:
    """The logins kept in `folder`; `clock` (time.time) dates an access token's expiry."""

    def __init__(self, folder: Path, clock: Callable[[], float] = time.time):
        self.folder = folder
        self.clock = clock

    def path(self, url: str) -> Path:
        return self.folder / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"

    def load(self, url: str) -> dict[str, Any]:
        """What is kept for the server at `url` (empty when nothing is, or the file cannot
        be read: a login is asked for again rather than a broken one used)."""
        try:
            handle = os.open(self.path(url), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return {}
        with os.fdopen(handle, "rb") as stored:
            data = stored.read(MAX_FILE_BYTES + 1)
        try:
            loaded = inbound.load_json(data, "a kept MCP login")
        except ValueError:
            return {}
        if not isinstance(loaded, dict) or loaded.get("url") != url:
            return {}
        return loaded

    def update(self, url: str, **parts: Any) -> None:
        """Keep `parts` (tokens, client, metadata) for the server at `url`, beside what is
        kept already; a part given as None is dropped."""
        data = {**self.load(url), "url": url}
        for key, value in parts.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
        private_data.write_file(self.path(url), json.dumps(data, indent=1) + "\n")

    def has_tokens(self, url: str) -> bool:
        return bool(self.load(url).get("tokens"))

    def forget(self, url: str) -> bool:
        """Remove the login kept for `url`, its registration too; whether there was one."""
        path = self.path(url)
        with contextlib.suppress(FileNotFoundError), private_data.writing(path):
            path.unlink()
            return True
        return False
