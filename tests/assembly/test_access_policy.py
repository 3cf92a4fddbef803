"""campus_mcp.assembly.access: each rule of the access policy, then the same rules as a client sees them.

The probe plugin has one scope of each kind: ``probe:public`` (always on), ``probe:read`` and
``probe:write`` (changes data, starts unchecked).
"""

from __future__ import annotations

import pytest
from campus_mcp.assembly import access
from campus_mcp.assembly.registry import Registry
from campus_mcp.base.settings import Settings
from campus_mcp.plugin.errors import PermissionMissing
from campus_mcp.plugin.principal import ANONYMOUS, Principal
from campus_mcp.testing import CampusFactory, load_plugins
from campus_mcp.testing.oauth import ScopeProbe
from mcp.shared.exceptions import MCPError


@pytest.fixture(scope="module")
def registry() -> Registry:
    settings = Settings(plugins=[], database_url="sqlite+aiosqlite://", product_name="Campus MCP")
    return load_plugins(settings, [("probe", ScopeProbe())])


def _app(*scopes: str) -> Principal:
    return Principal(user_id=7, username="student7", client_id="app", scopes=frozenset(scopes))


def test_always_on_scopes_are_held_by_everyone(registry: Registry) -> None:
    assert access.always_on_scopes(registry) == {"probe:public"}
    assert access.effective_scopes(registry, ANONYMOUS) == {"probe:public"}
    assert access.effective_scopes(registry, _app()) == {"probe:public"}
    assert access.effective_scopes(registry, _app("probe:read")) == {"probe:public", "probe:read"}


def test_legacy_read_stands_for_every_read_scope_never_a_write_one(registry: Registry) -> None:
    assert access.read_scopes(registry) == {"probe:public", "probe:read"}
    held = access.effective_scopes(registry, _app(access.LEGACY_READ_SCOPE))
    assert {"probe:public", "probe:read"} <= held and "probe:write" not in held
    assert access.expand_legacy(registry, ["probe:write"]) == {"probe:write"}


def test_anonymous_callers_see_the_public_toolset_signed_in_ones_every_tool(registry: Registry) -> None:
    assert [tool.name for tool in access.visible_tools(registry, ANONYMOUS)] == ["public_probe"]
    assert [tool.name for tool in access.visible_tools(registry, _app())] == [
        "public_probe",
        "read_probe",
        "write_probe",
    ]


def test_may_call_follows_the_effective_scopes(registry: Registry) -> None:
    tools = registry.tools
    assert access.may_call(registry, ANONYMOUS, tools["public_probe"])
    assert not access.may_call(registry, ANONYMOUS, tools["read_probe"])
    assert access.may_call(registry, _app("read"), tools["read_probe"])
    assert not access.may_call(registry, _app("read"), tools["write_probe"])
    assert access.may_call(registry, _app("probe:write"), tools["write_probe"])


def test_the_permission_error_says_which_permission_and_how_to_add_it(registry: Registry) -> None:
    with pytest.raises(PermissionMissing) as caught:
        access.check_call(registry, _app("probe:read"), registry.tools["write_probe"])
    error = caught.value
    assert error.scope == "probe:write"
    assert "write_probe needs the permission 'probe:write' (Change your probe data.)" in error.message
    assert "disconnect Campus MCP, connect it again and check the box for 'probe:write'" in error.message
    assert [link.url for link in error.links] == [f"{registry.settings.base_url}/dashboard/settings#connected-apps"]
    access.check_call(registry, _app("probe:write"), registry.tools["write_probe"])  # no error


def test_step_up_asks_for_the_token_scopes_plus_the_missing_one(registry: Registry) -> None:
    tools = registry.tools
    assert access.step_up_scope(registry, _app("probe:read"), tools["write_probe"]) == "probe:read probe:write"
    assert access.step_up_scope(registry, _app("probe:read"), tools["read_probe"]) is None
    assert access.step_up_scope(registry, _app("read"), tools["read_probe"]) is None
    assert access.step_up_scope(registry, ANONYMOUS, tools["write_probe"]) is None  # no token to step up


def test_the_step_up_list_matches_a_client_by_id_or_by_name() -> None:
    allowed = ["Probe Assistant", "client-42"]
    assert access.on_step_up_list(allowed, "client-1", "Probe Assistant")
    assert access.on_step_up_list(allowed, "client-42", None)
    assert not access.on_step_up_list(allowed, "client-1", "Other App")
    assert not access.on_step_up_list([], "client-1", "Probe Assistant")


def test_the_consent_page_offers_what_was_asked_in_registry_order(registry: Registry) -> None:
    assert [s.name for s in access.requested_scopes(registry, "probe:write probe:read nope")] == [
        "probe:read",
        "probe:write",
    ]
    assert [s.name for s in access.requested_scopes(registry, "read")] == ["probe:public", "probe:read"]
    assert access.requested_scopes(registry, None) == []


def test_which_consent_boxes_start_checked(registry: Registry) -> None:
    read, write = registry.scopes["probe:read"], registry.scopes["probe:write"]
    # A first consent: the read scope that asks to be, never one that changes data.
    assert access.starts_checked(read, remembered=None, stepping_up=False)
    assert not access.starts_checked(write, remembered=None, stepping_up=False)
    # The student's last choice, both ways.
    assert access.starts_checked(write, remembered=frozenset({"probe:write"}), stepping_up=False)
    assert not access.starts_checked(read, remembered=frozenset({"probe:write"}), stepping_up=False)
    # An allow-listed app coming back for more.
    assert access.starts_checked(write, remembered=frozenset(), stepping_up=True)


def test_a_decision_grants_only_offered_boxes_plus_the_always_on_scopes(registry: Registry) -> None:
    chosen, scope = access.granted_scope(registry, ["probe:read"], ["probe:read", "probe:write"])
    assert chosen == {"probe:read"}  # probe:write was not offered: a forged box grants nothing
    assert scope == "probe:public probe:read"
    assert access.granted_scope(registry, ["probe:read"], []) == (frozenset(), "probe:public")


# the same rules through the real MCP client ----------------------------------------------------


async def test_a_legacy_read_token_calls_read_tools_and_is_told_how_to_add_write(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("probe", ScopeProbe())])
    async with campus.mcp(principal=campus.principal(["read"], user_id=1, username="student1")) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        read = await client.call_tool("read_probe", {})
        denied = await client.call_tool("write_probe", {})
    assert listed == ["public_probe", "read_probe", "write_probe"]
    assert not read.is_error
    assert denied.is_error and "needs the permission 'probe:write'" in denied.content[0].text


async def test_an_anonymous_caller_cannot_call_a_tool_outside_the_public_toolset(
    campus_factory: CampusFactory,
) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("probe", ScopeProbe())], anonymous_access=True)
    async with campus.mcp() as client:
        public = await client.call_tool("public_probe", {})
        with pytest.raises(MCPError, match=r"Unknown tool 'read_probe'.*they are: public_probe"):
            await client.call_tool("read_probe", {})
    assert not public.is_error
