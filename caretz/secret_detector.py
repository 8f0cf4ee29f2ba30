"""detect-secrets beside caretz's table of secret shapes (caretz/secrets.py).

The table knows the shapes caretz has met (provider prefixes, passwords on command lines,
config keys); detect-secrets, a maintained library, brings its own: a plugin per vendor
token, a keyword plugin that reads `password: …`, `secret = "…"` and their cousins as
config files and code write them, and the entropy plugins that find a random string in
quotes. `findings(text)` is what they find, line by line, through detect-secrets' own
filters (sequential strings, UUIDs, ids, templates, `$VAR`s, indirect references), and
then caretz's: a hash is not a secret (a hex string the entropy plugin alone found, and
the checksums lock files and `go.sum` write), nor is an address.

Nothing here ever verifies a finding against a vendor (detect-secrets' verification is a
filter caretz does not turn on), so no secret leaves the machine through it, and nothing
configures detect-secrets from a baseline file, so no plugin of a project's is loaded. A leaf: it
imports nothing from caretz. Importing detect-secrets costs a few hundred ms, so this
module is imported only where a text or a value is about to be judged: the judge's
summary, and the shell's environment when a value holds a token the table does not
settle (caretz/secrets.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)
from detect_secrets.plugins.keyword import KeywordDetector

# An address is not a secret: the judge reads where a command connected.
_NOT_SECRETS = frozenset({"IPPublicDetector"})
# The keyword plugin reads a line as a config file does (`password: hunter2`, unquoted) and
# as code does (`password = "hunter2"`): the text may be either.
_KEYWORD_FLAVOURS = ("text.yaml", "text.py")
# Checksums written beside a name: `sha512-…` (npm's integrity), `h1:…` (go.sum),
# `sha256:…` (digests), `--hash=sha256:…` (pip).
_CHECKSUM = re.compile(r"(?:sha(?:1|224|256|384|512)[-:=]|\bh1:|\bmd5[-:=])$", re.IGNORECASE)
_CHECKSUM_VALUE = re.compile(r"(?:sha(?:1|224|256|384|512)|md5)[-:=]", re.IGNORECASE)
# Where a checksum or public key stands in base64 without a label of its own.
_NOT_SECRET_BEFORE = re.compile(
    r"(?:(?:content-md5|digest|etag|checksum|integrity|hash)[\"']?\s*[:=]\s*(?:W/)?[\"']?|"
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp[0-9]+|sk-ssh-ed25519@openssh\.com)\s+|"
    r"data:[a-z]+/[a-z0-9.+\-]+;base64,)$",
    re.IGNORECASE,
)
# What any plugin needs in a line to find something: a long word (a token, a key, a
# random string), a URL with a user, a key block, or a word the keyword plugin reads.
_KEYWORD = re.compile(r"api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|"
                      r"priv_?key|private_?key|client_?key|db_?pass|database_?pass|key_?pass|"
                      r"password|passwd|pwd|secret|contrase", re.IGNORECASE)  # fmt: skip
_CANDIDATE = re.compile(_KEYWORD.pattern + r"|[A-Za-z0-9_\-+/=.~]{16,}|://[^\s/]*@|PRIVATE KEY",
                        re.IGNORECASE)  # fmt: skip
# A word a token could be: 20 characters or more of base64 or URL-safe base64.
_WORD = re.compile(r"[A-Za-z0-9_\-+/=.~]{20,}")
_HEX = re.compile(r"[0-9a-fA-F\-]+")
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Keys that are public by design (Stripe's publishable keys, Mapbox's public tokens).
_PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "pk.eyJ")
_ENTROPY = Base64HighEntropyString(limit=4.5)


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    classes: Iterable[type[BasePlugin]] = get_mapping_from_secret_type_to_class().values()
    return tuple(cls() for cls in classes if cls.__name__ not in _NOT_SECRETS)


def findings(text: str) -> list[str]:
    """The secret values detect-secrets finds in `text` (not verified; each found once)."""
    found: dict[str, None] = {}
    for line in text.splitlines():
        if _CANDIDATE.search(line):  # a line no plugin could find anything in is skipped
            for value in _line_findings(line):
                found.setdefault(value)
    return list(found)


def _line_findings(line: str) -> list[str]:
    found = _random_words(line)
    indirect = heuristic.is_indirect_reference(line)
    for plugin in _plugins():
        keyword = isinstance(plugin, KeywordDetector)
        for flavour in _KEYWORD_FLAVOURS if keyword else ("text",):
            for secret in plugin.analyze_line(filename=flavour, line=line):
                value = secret.secret_value
                if not value or _passed_over(value, line, plugin, indirect):
                    continue
                if keyword and _KEYWORD.search(value):
                    continue  # `secret=secret`, `password = password_hash`: a name, not a value
                found.append(value)
    return found


def _passed_over(value: str, line: str, plugin: BasePlugin, indirect: bool) -> bool:
    """detect-secrets' own filters, then caretz's: hashes are not secrets."""
    regex_based = isinstance(plugin, RegexBasedDetector)
    if not regex_based and indirect:
        return True
    if (
        heuristic.is_sequential_string(value)
        or heuristic.is_potential_uuid(value)
        or heuristic.is_likely_id_string(value, line, plugin)
        or heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_not_alphanumeric_string(value)
    ):
        return True
    if regex_based:
        return False
    if isinstance(plugin, HexHighEntropyString):
        return True  # a hex string found for its entropy alone: a hash, a commit, an id
    before = line[: line.find(value)]
    return bool(_CHECKSUM.search(before) or _CHECKSUM_VALUE.match(value))


def _random_words(line: str) -> list[str]:
    """Words outside quotes that read as random: the entropy plugin's measure (it asks only
    quoted strings) near the most a word of that length can have, in three kinds of
    character, and not a run of words (`RemovedInDjango60Warning`), a checksum, a public
    key or a key that is public by design. A word with slashes (a URL's path) is read
    whole, and if it is not random, part by part."""
    found = []
    for match in _WORD.finditer(line):
        before = line[: match.start()]
        if _CHECKSUM.search(before) or _NOT_SECRET_BEFORE.search(before):
            continue
        word = match.group()
        if _CHECKSUM_VALUE.match(word) or word.startswith(_PUBLIC_PREFIXES):
            continue
        parts = [word, *word.split("/")] if "/" in word else [word]
        random = next((part for part in parts if _reads_random(part.strip("=.-_~"))), None)
        if random is not None:
            found.append(random.strip("=.-_~"))
    return found


def _reads_random(word: str) -> bool:
    if len(word) < 20 or _HEX.fullmatch(word) or word.startswith("/"):
        return False
    kinds = (str.isupper, str.islower, str.isdigit)
    if not all(any(kind(char) for char in word) for kind in kinds):
        return False
    pieces = _PIECES.findall(word)
    if pieces and sum(map(len, pieces)) / len(pieces) >= 3.5:
        return False  # words run together: an identifier
    bits = _ENTROPY.calculate_shannon_entropy(word)
    return bits >= 0.85 * math.log2(min(len(word), 64))
