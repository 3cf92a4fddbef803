"""A plugin route whose input breaks a rule answers 400 with the field and the rule, never 500.

Whether the route builds its pydantic model in the handler (the way docs/plugin-authoring.md
shows) or lets Litestar convert a typed parameter, the host answers the same JSON: ``error``,
``message`` (for a person), and ``fields`` with each field, the rule it broke and what to do.
Everything goes through the real app over the harness's REST client.
"""

from __future__ import annotations

from typing import Any

from campus_mcp import PluginInfo, RouteGroup, RouteRef, Scope, Tool, ToolContext, hookimpl
from campus_mcp.testing import CampusFactory, CampusHarness
from litestar import get
from litestar.params import FromQuery
from pydantic import BaseModel, Field


class RoomQuery(BaseModel):
    """What a plugin written from the docs takes: a bounded integer."""

    min_capacity: int = Field(default=1, ge=1, le=500, description="Rooms with at least this many seats.")


class RoomList(BaseModel):
    rooms: list[str]


@get("/api/v1/rooms", sync_to_thread=False)
def list_rooms(min_capacity: FromQuery[int] = 1) -> RoomList:
    # The model is built in the handler, as the dining example does: its ValidationError escapes.
    query = RoomQuery(min_capacity=min_capacity)
    return RoomList(rooms=[f"Room 101 ({query.min_capacity}+ seats)"])


@get("/api/v1/rooms/near", sync_to_thread=False)
def rooms_near(building: FromQuery[str]) -> RoomList:
    return RoomList(rooms=[f"{building} 101"])


async def _rooms_tool(_context: ToolContext, query: RoomQuery) -> RoomList:
    return RoomList(rooms=[f"Room 101 ({query.min_capacity}+ seats)"])


class Rooms:
    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="rooms", version="1.0", title="Library rooms", description="Group study rooms.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [Scope(name="rooms", description="See the library's study rooms.", always_on=True)]

    @hookimpl
    def register_tools(self) -> list[Tool]:
        return [
            Tool(
                name="find_study_room",
                title="Find a study room",
                description="Finds a group study room in the library.",
                scope="rooms",
                input_model=RoomQuery,
                output_model=RoomList,
                handler=_rooms_tool,
                mirrors=(
                    RouteRef(method="GET", path="/api/v1/rooms"),
                    RouteRef(method="GET", path="/api/v1/rooms/near"),
                ),
            )
        ]

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        return [RouteGroup(handlers=[list_rooms, rooms_near])]


async def _get(campus: CampusHarness, url: str) -> tuple[int, dict[str, Any]]:
    return (await _get_all(campus, url))[0]


async def _get_all(campus: CampusHarness, *urls: str) -> list[tuple[int, dict[str, Any]]]:
    # One client per harness: an app's lifespan (and the MCP session manager in it) runs once.
    async with campus.rest() as rest:
        responses = [await rest.get(url) for url in urls]
    return [(response.status_code, response.json()) for response in responses]


def _assert_no_internals(body: dict[str, Any]) -> None:
    text = repr(body)
    assert "Traceback" not in text and "pydantic" not in text.lower() and "errors.pydantic.dev" not in text


async def test_a_too_long_dining_hall_slug_is_a_400_naming_the_field(campus_factory: CampusFactory) -> None:
    dining = await campus_factory(plugins=["dining"], demo=True)
    status, body = await _get(dining, "/api/v1/dining/halls/" + "x" * 81)
    assert status == 400, body
    assert body["error"] == "InvalidInput"
    assert body["field"] == "slug"
    assert body["fields"] == [
        {"field": "slug", "rule": "string_too_long", "message": "String should have at most 80 characters"}
    ]
    assert "slug" in body["message"] and "80 characters" in body["message"]
    _assert_no_internals(body)


async def test_an_unknown_weekday_on_the_dining_route_says_which_days_are_allowed(
    campus_factory: CampusFactory,
) -> None:
    dining = await campus_factory(plugins=["dining"], demo=True)
    status, body = await _get(dining, "/api/v1/dining/halls?open_on=funday")
    assert status == 400, body
    assert [f["field"] for f in body["fields"]] == ["open_on"]
    assert "'sunday'" in body["message"]
    # The tool refuses the same value with the same words.
    result = await dining.call("list_dining_halls", {"open_on": "funday"})
    assert result.is_error
    assert body["fields"][0]["message"] in result.content[0].text  # type: ignore[union-attr]


async def test_a_model_built_in_a_plugin_handler_breaking_a_bound_is_a_400(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("rooms", Rooms())])
    (status, body), (ok_status, ok) = await _get_all(
        campus, "/api/v1/rooms?min_capacity=0", "/api/v1/rooms?min_capacity=4"
    )
    assert status == 400, body
    assert body["fields"] == [
        {"field": "min_capacity", "rule": "greater_than_equal", "message": "Input should be greater than or equal to 1"}
    ]
    assert body["message"].startswith("Invalid request: min_capacity: Input should be greater than or equal to 1")
    _assert_no_internals(body)
    assert ok_status == 200 and ok == {"rooms": ["Room 101 (4+ seats)"]}


async def test_a_parameter_litestar_cannot_convert_gets_the_same_answer(campus_factory: CampusFactory) -> None:
    campus = await campus_factory(plugins=[], extra_plugins=[("rooms", Rooms())])
    (status, body), (missing_status, missing) = await _get_all(
        campus, "/api/v1/rooms?min_capacity=lots", "/api/v1/rooms/near?secret=hunter2"
    )
    assert status == 400, body
    assert body["error"] == "InvalidInput"
    assert [f["field"] for f in body["fields"]] == ["min_capacity"]
    assert body["field"] == "min_capacity"
    assert "min_capacity" in body["message"] and "int" in body["message"]
    _assert_no_internals(body)
    assert missing_status == 400, missing
    assert missing["fields"] == [
        {"field": "building", "rule": "missing", "message": "Missing required query parameter 'building'"}
    ]
    assert "hunter2" not in repr(missing)  # the query string is not echoed back


async def test_a_validator_sentence_is_not_followed_by_a_second_full_stop(campus_factory: CampusFactory) -> None:
    # Issue 8.10: "... finds codes by title words.. Fix these parameters".
    catalog = await campus_factory(plugins=["catalog"])
    status, body = await _get(catalog, "/api/v1/catalog/courses/not-a-code")
    assert status == 400, body
    assert "'not-a-code' is not a course code" in body["message"]
    assert ".." not in body["message"] and "Value error" not in body["message"]
    assert body["fields"][0]["field"] == "code" and body["fields"][0]["rule"] == "value_error"
    result = await catalog.call("get_course", {"code": "not-a-code"})
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "'not-a-code' is not a course code" in text and ".." not in text
