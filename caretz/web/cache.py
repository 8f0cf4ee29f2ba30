"""The session's fetched pages, by the URL asked for: a second call for a URL (the next
part of a long page, or the same page read again) sends no request.

Bounded (the least recently used pages go first) and safe across threads, since a
reply's read-only calls run together. A page that needed a rule naming a host that is not
public is served again only while such a rule still names it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from caretz.web.model import Page

MAX_PAGES = 64
MAX_CHARS = 8_000_000  # of all cached text together


class FetchCache:
    def __init__(self, max_pages: int = MAX_PAGES, max_chars: int = MAX_CHARS):
        self.max_pages = max_pages
        self.max_chars = max_chars
        self._pages: OrderedDict[str, Page] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, url: str) -> Page | None:
        with self._lock:
            page = self._pages.get(url)
            if page is not None:
                self._pages.move_to_end(url)
            return page

    def put(self, url: str, page: Page) -> None:
        with self._lock:
            self._pages[url] = page
            self._pages.move_to_end(url)
            while len(self._pages) > self.max_pages or (
                len(self._pages) > 1 and self._chars() > self.max_chars
            ):
                self._pages.popitem(last=False)

    def forget(self, url: str) -> None:
        with self._lock:
            self._pages.pop(url, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pages)

    def _chars(self) -> int:
        return sum(len(page.text) for page in self._pages.values())
