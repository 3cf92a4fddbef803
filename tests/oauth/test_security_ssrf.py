"""The SSRF guard of client ID metadata documents sees through IPv6 forms that carry an IPv4 address (issue 9).

An IPv6 address can embed an IPv4 one (NAT64, 6to4, IPv4-compatible, IPv4-mapped); a gateway on
the path delivers the packet to the embedded address, so the guard judges that address.
"""

from __future__ import annotations

import pytest
from campus_mcp.base.outbound import address_allowed as _address_allowed
from campus_mcp.base.settings import Settings
from campus_mcp.oauth.cimd import MetadataDocumentError, fetch_metadata_document

# (form, embeds loopback or a private address, embeds a public address)
FORMS = [
    ("IPv4-mapped ::ffff:a.b.c.d", "::ffff:10.0.0.1", "::ffff:8.8.8.8"),
    ("NAT64 64:ff9b::/96", "64:ff9b::10.0.0.1", "64:ff9b::8.8.8.8"),
    ("NAT64 loopback", "64:ff9b::127.0.0.1", "64:ff9b::1.1.1.1"),
    ("6to4 2002::/16", "2002:a00:1::1", "2002:808:808::1"),
    ("6to4 loopback", "2002:7f00:1::1", "2002:101:101::5"),
    ("IPv4-compatible ::a.b.c.d", "::10.0.0.1", "::8.8.8.8"),
    ("IPv4-compatible metadata service", "::169.254.169.254", "::9.9.9.9"),
]


@pytest.mark.parametrize(("form", "inner_private", "inner_public"), FORMS, ids=[f[0] for f in FORMS])
def test_an_embedded_ipv4_address_is_judged_by_itself(form: str, inner_private: str, inner_public: str) -> None:
    settings = Settings()
    assert not _address_allowed(inner_private, settings), f"{form}: {inner_private} reaches a private address"
    assert _address_allowed(inner_public, settings), f"{form}: {inner_public} is a public address"


def test_the_local_use_nat64_prefix_is_never_public() -> None:
    # 64:ff9b:1::/48 (RFC 8215) is for NAT64 inside one network: IANA lists it as not globally
    # reachable, so whatever it embeds it leads into somebody's own network.
    settings = Settings()
    for address in ("64:ff9b:1::a00:1", "64:ff9b:1::808:808", "64:ff9b:1:ffff::1"):
        assert not _address_allowed(address, settings), address


def test_plain_ipv6_is_still_judged_as_before() -> None:
    settings = Settings()
    assert _address_allowed("2606:4700:4700::1111", settings)
    for address in ("::1", "::", "fe80::1", "fd12:3456::1", "ff02::1"):
        assert not _address_allowed(address, settings), address


def test_embedded_loopback_is_allowed_only_with_the_test_setting() -> None:
    relaxed = Settings(oauth_metadata_loopback_for_tests=True)
    assert _address_allowed("64:ff9b::127.0.0.1", relaxed)
    assert not _address_allowed("64:ff9b::10.0.0.1", relaxed)


@pytest.mark.parametrize("host", ["[64:ff9b::7f00:1]", "[2002:a9fe:a9fe::1]", "[::10.1.2.3]", "[::ffff:192.168.0.1]"])
async def test_a_metadata_document_url_on_an_embedded_private_address_is_refused(host: str) -> None:
    with pytest.raises(MetadataDocumentError) as refused:
        await fetch_metadata_document(f"https://{host}/client.json", Settings())
    assert "not public" in str(refused.value)
