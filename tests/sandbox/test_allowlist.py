"""The network allowlist: which names, wildcards, addresses and presets it lets through."""

from __future__ import annotations

import pytest

from caretz.sandbox.allowlist import (
    PRESETS,
    AllowlistError,
    build_allowlist,
    normalize_host,
)


def test_a_name_matches_itself_whatever_its_case_or_trailing_dot():
    allowlist = build_allowlist(["PyPI.org"])

    assert allowlist.allows(normalize_host("pypi.org"))
    assert allowlist.allows(normalize_host("PYPI.ORG."))
    assert not allowlist.allows(normalize_host("files.pypi.org"))
    assert not allowlist.allows(normalize_host("pypi.org.evil.test"))
    assert not allowlist.allows(normalize_host("notpypi.org"))


def test_a_wildcard_matches_the_names_below_its_domain_not_the_domain():
    allowlist = build_allowlist(["*.github.com"])

    assert allowlist.allows("api.github.com")
    assert allowlist.allows("a.b.github.com")
    assert not allowlist.allows("github.com")
    assert not allowlist.allows("evilgithub.com")
    assert not allowlist.allows("github.com.evil.test")


def test_the_package_registries_preset_names_each_registry_host():
    allowlist = build_allowlist(["package-registries"])

    for host in ("pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "static.crates.io"):
        assert allowlist.allows(host)
    assert set(PRESETS["package-registries"]) <= allowlist.names
    assert not allowlist.allows("github.com")
    assert allowlist.entries == ("package-registries",)  # shown as written


def test_addresses_are_entries_in_their_short_form():
    allowlist = build_allowlist(["10.1.2.3", "[2001:db8::0001]"])

    assert allowlist.allows(normalize_host("10.1.2.3"))
    assert allowlist.allows(normalize_host("[2001:db8::1]"))
    assert not allowlist.allows(normalize_host("10.1.2.4"))


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("*", 'for every host, set sandbox.network to "on"'),
        ("*.-x.com", 'a wildcard is "*." and a domain'),
        ("pypi .org", "is not a host name"),
        ("https://pypi.org", "is not a host name"),
        ("on", "is not a host name"),
    ],
)
def test_an_entry_that_is_no_host_is_refused_naming_it(entry, says):
    with pytest.raises(AllowlistError, match=r"^'[^']*'") as error:
        build_allowlist(["pypi.org", entry])

    assert repr(entry) in str(error.value) and says in str(error.value)


def test_a_pin_maps_a_listed_name_to_an_address():
    allowlist = build_allowlist(
        ["index.corp", "*.test"], {"Index.Corp": "10.0.0.7", "a.test": "::1"}
    )

    assert allowlist.pinned_address("index.corp") == "10.0.0.7"
    assert allowlist.pinned_address("a.test") == "::1"
    assert allowlist.pinned_address("b.test") is None


def test_a_pin_opens_nothing_by_itself_and_must_be_an_address():
    allowlist = build_allowlist(["pypi.org"], {"later.test": "127.0.0.1"})

    assert not allowlist.allows("later.test")
    assert allowlist.pinned_address("later.test") == "127.0.0.1"
    with pytest.raises(AllowlistError, match="which is no address"):
        build_allowlist(["pypi.org"], {"pypi.org": "localhost"})
    with pytest.raises(AllowlistError, match="sandbox.hosts: 'a b' is not a host name"):
        build_allowlist(["pypi.org"], {"a b": "10.0.0.1"})


def test_a_requested_host_that_is_no_name_is_refused():
    with pytest.raises(AllowlistError):
        normalize_host("pypi.org/simple")
    with pytest.raises(AllowlistError):
        normalize_host("")
