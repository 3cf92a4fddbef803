"""The dashboard shell: signed-in only, Settings with Connected apps, plugin pages in the navigation,
and the session principal that REST user routes receive."""

from __future__ import annotations

from typing import Any

from campus_mcp import PluginInfo, Principal, RouteGroup, hookimpl
from campus_mcp.oauth.store import OAuthStore
from campus_mcp.oauth.testkit import parse_forms
from campus_mcp.testing import CampusFactory, CampusHarness
from campus_mcp.web import dashboard_page
from litestar import Controller, MediaType, Request, Response, get
from litestar.di import NamedDependency


class GradesController(Controller):
    """A plugin page in a Controller, as the catalog and the dining example write their routes."""

    path = "/dashboard/grades"

    @get("/", opt={"dashboard_nav": "My grades"}, media_type=MediaType.HTML)
    async def grades(self, request: Request[Any, Any, Any]) -> Response[str]:
        return dashboard_page(request.app.state.deployment, request, "My grades", "<h1>My grades</h1>")


class PagesPlugin:
    """A plugin with one dashboard page and one REST route that reads the principal."""

    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="pages", version="1", title="Pages", description="A page in the dashboard.")

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        @get("/dashboard/timetable", opt={"dashboard_nav": "My timetable"}, media_type=MediaType.HTML)
        async def timetable(request: Request[Any, Any, Any]) -> Response[str]:
            deployment = request.app.state.deployment
            return dashboard_page(deployment, request, "My timetable", "<h1>My timetable</h1>")

        @get("/dashboard/lms", media_type=MediaType.HTML)
        async def lms(request: Request[Any, Any, Any]) -> Response[str]:
            # A form whose post goes on to the student's LMS (an OAuth authorization) names its origin.
            targets = ("https://lms.example.edu", "https://evil.example; script-src *")
            return dashboard_page(request.app.state.deployment, request, "LMS", "<h1>LMS</h1>", form_targets=targets)

        @get("/api/v1/me", media_type=MediaType.JSON)
        async def me(principal: NamedDependency[Principal]) -> dict[str, Any]:
            return {"user_id": principal.user_id, "username": principal.username}

        return [RouteGroup(handlers=[timetable, lms, me, GradesController], exempt={"GET /api/v1/me": "test route"})]


async def _campus(campus_factory: CampusFactory) -> CampusHarness:
    # Every installed plugin, as a deployment runs: the catalog's and the dining example's
    # Controllers are in the routes the shell's navigation walks (plugins=[] hid a 500 there).
    return await campus_factory(extra_plugins=[("pages", PagesPlugin())], demo=True)


async def _sign_in(client: Any, next_path: str) -> Any:
    page = await client.get("/login", params={"next": next_path})
    data = {f.name: f.value for f in parse_forms(page.text)[-1].fields if f.kind == "hidden"}
    return await client.post("/login", data=data | {"username": "student1", "password": "demo"}, follow_redirects=False)


async def test_the_dashboard_needs_a_sign_in(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        response = await client.get("/dashboard/settings", follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"] == "/login?next=%2Fdashboard%2Fsettings"
        signed_in = await _sign_in(client, "/dashboard/settings")
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/dashboard/settings"
        settings = await client.get("/dashboard/settings")
        assert settings.status_code == 200
        assert "Connected apps" in settings.text and "No app can use your data right now." in settings.text
        assert "default-src 'none'" in settings.headers["content-security-policy"]


async def test_the_home_page_names_the_product_once(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        home = await client.get("/")
    assert home.status_code == 200
    assert "<title>Campus MCP for Wentworth Institute of Technology</title>" in home.text
    assert "· Campus MCP" not in home.text


async def test_login_never_redirects_to_another_site(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
            response = await _sign_in(client, target)
            assert response.headers["location"] == "/dashboard", target


async def test_connected_apps_lists_each_app_with_its_permissions(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    store = OAuthStore(campus.sessions)
    from campus_mcp.oauth.store import ClientRecord

    for client_id, name, scope in (("c-1", "Claude", "catalog schedule:read"), ("c-2", "ChatGPT", "catalog")):
        await store.save_client(
            ClientRecord(client_id=client_id, kind="registered", client_name=name, redirect_uris=())
        )
        await store.save_tokens(
            access_token=f"at-{client_id}",
            refresh_token=f"rt-{client_id}",
            client_id=client_id,
            user_id=1,
            scope=scope,
            resource=campus.settings.mcp_url,
            family_id=f"f-{client_id}",
        )
    async with campus.rest() as client:
        await _sign_in(client, "/dashboard/settings")
        page = await client.get("/dashboard/settings")
        # The OAuth apps, each with its Disconnect (a family's connections come after them).
        apps = [item for item in page.text.split('class="app"')[1:] if "Disconnect" in item]
        assert len(apps) == 2
        assert "ChatGPT" in apps[0] and "<code>catalog</code>" in apps[0]
        assert "Claude" in apps[1] and "<code>schedule:read</code>" in apps[1]
        dashboard = await client.get("/dashboard")
        assert "2 apps can use your WIT data." in dashboard.text


async def test_plugins_add_pages_to_the_shell_and_rest_routes_get_the_student(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        anonymous = await client.get("/api/v1/me")
        assert anonymous.json() == {"user_id": None, "username": None}
        await _sign_in(client, "/dashboard")
        dashboard = await client.get("/dashboard")
        assert '<a href="/dashboard/timetable">My timetable</a>' in dashboard.text
        assert '<a href="/dashboard/grades">My grades</a>' in dashboard.text
        grades = await client.get("/dashboard/grades")
        assert grades.status_code == 200 and '<a href="/dashboard/grades" aria-current="page">' in grades.text
        timetable = await client.get("/dashboard/timetable")
        assert "My timetable" in timetable.text and "Signed in as Demo Student 1" in timetable.text
        me = await client.get("/api/v1/me")
        assert me.json() == {"user_id": 1, "username": "student1"}
        sign_out = next(form for form in parse_forms(timetable.text) if form.action == "/logout")
        signed_out = await client.post(
            "/logout", data={f.name: f.value for f in sign_out.fields}, follow_redirects=False
        )
        assert signed_out.status_code == 303
        assert (await client.get("/api/v1/me")).json()["user_id"] is None


async def test_a_plugin_page_may_let_its_form_continue_to_one_named_origin(campus_factory: CampusFactory) -> None:
    campus = await _campus(campus_factory)
    async with campus.rest() as client:
        await _sign_in(client, "/dashboard")
        lms = await client.get("/dashboard/lms")
        timetable = await client.get("/dashboard/timetable")
    policy = lms.headers["content-security-policy"]
    # The named plain origin joins form-action; a value that would add a directive is left out.
    assert "form-action 'self' https://lms.example.edu;" in policy and "evil.example" not in policy
    assert "form-action 'self';" in timetable.headers["content-security-policy"]
