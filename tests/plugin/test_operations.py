"""One ``Operation`` gives a tool and its REST twin that answer alike and fail alike.

A plugin defined here declares its operations once (``campus_mcp.Operation``) and registers
``operation_tools`` and ``operation_routes``; everything is asked through the real app: the
REST twin over the harness's HTTP client, the tool through the real MCP client.
"""

from __future__ import annotations

from typing import Any

import pytest
from campus_mcp import (
    Operation,
    PlannedChange,
    PluginInfo,
    RouteGroup,
    Scope,
    Settings,
    Tool,
    ToolContext,
    ToolExample,
    hookimpl,
    operation_examples,
    operation_routes,
    operation_tools,
)
from campus_mcp.testing import CampusFactory, CampusHarness
from pydantic import BaseModel, ConfigDict, Field


class RoomQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    building: str = Field(min_length=1, max_length=40, description="The building, e.g. 'Library'.")
    min_capacity: int = Field(default=1, ge=1, le=500, description="Rooms with at least this many seats.")
    features: list[str] = Field(default_factory=list, description="Every feature the room must have.")


class RoomBooking(BaseModel):
    model_config = ConfigDict(extra="forbid")

    building: str = Field(min_length=1, max_length=40)
    room: str = Field(min_length=1, max_length=10)


class RoomList(BaseModel):
    rooms: list[str]
    asked_by: str
    desk: str


# What each door's ``after`` hook saw, so a test can tell both doors ran it.
seen: list[str] = []


async def find_rooms(context: ToolContext, args: RoomQuery) -> RoomList:
    features = "+".join(args.features) or "any"
    return RoomList(
        rooms=[f"{args.building} 101 ({args.min_capacity}+ seats, {features})"],
        asked_by="anonymous" if context.principal.is_anonymous else str(context.principal.username),
        desk=str(context.plugin_settings),
    )


async def book_room(context: ToolContext, args: RoomBooking) -> RoomList:
    return RoomList(rooms=[f"{args.building} {args.room}"], asked_by="anonymous", desk="booked")


async def plan_booking(_context: ToolContext, args: RoomBooking) -> PlannedChange:
    # A write operation needs a plan (campus_mcp.plugin.confirmation); these calls are never asked.
    return PlannedChange(message=f"Book {args.building} {args.room}.", version="none")


async def remember(_context: ToolContext, answer: RoomList) -> None:
    seen.append(answer.rooms[0])


OPERATIONS = [
    Operation(
        name="find_study_room",
        title="Find a study room",
        description=lambda settings, plugin_settings: f"Finds a group study room at {settings.campus_short_name}.",
        scope="rooms",
        input_model=RoomQuery,
        output_model=RoomList,
        run=find_rooms,
        method="GET",
        path="/api/v1/rooms/{building}",
        after=remember,
        examples=(ToolExample(tool="", arguments={"building": "Library"}, user=None),),
    ),
    Operation(
        name="book_study_room",
        title="Book a study room",
        description="Books a group study room.",
        scope="rooms",
        input_model=RoomBooking,
        output_model=RoomList,
        run=book_room,
        plan=plan_booking,
        method="POST",
        path="/api/v1/rooms/{building}/bookings",
        writes=True,
    ),
]


class Rooms:
    @hookimpl
    def campus_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="rooms", version="1.0", title="Library rooms", description="Group study rooms.")

    @hookimpl
    def register_scopes(self) -> list[Scope]:
        return [Scope(name="rooms", description="See the library's study rooms.", always_on=True)]

    @hookimpl
    def register_tools(self, settings: Settings) -> list[Tool]:
        return operation_tools(OPERATIONS, settings=settings, plugin_settings="the library desk")

    @hookimpl
    def register_routes(self) -> list[RouteGroup]:
        return [RouteGroup(handlers=operation_routes(OPERATIONS))]


@pytest.fixture
async def rooms(campus_factory: CampusFactory) -> CampusHarness:
    return await campus_factory(plugins=[], extra_plugins=[("rooms", Rooms())])


async def _get_all(campus: CampusHarness, *urls: str) -> list[tuple[int, Any]]:
    async with campus.rest() as rest:
        responses = [await rest.get(url) for url in urls]
    return [(response.status_code, response.json()) for response in responses]


async def test_the_rest_twin_answers_what_the_tool_answers(rooms: CampusHarness) -> None:
    seen.clear()
    [(status, body)] = await _get_all(rooms, "/api/v1/rooms/Library?min_capacity=4&features=whiteboard&features=tv")
    assert status == 200, body
    result = await rooms.call(
        "find_study_room", {"building": "Library", "min_capacity": 4, "features": ["whiteboard", "tv"]}
    )
    assert not result.is_error, result.content
    from_tool = {k: v for k, v in (result.structured_content or {}).items() if k != "advisory"}
    assert body == from_tool
    # The path parameter filled its field, the repeated key became a list, and both doors ran
    # the same call: the after hook saw each answer.
    assert body["rooms"] == ["Library 101 (4+ seats, whiteboard+tv)"]
    assert seen == [body["rooms"][0], body["rooms"][0]]


async def test_the_rest_twin_refuses_what_the_tool_refuses_naming_the_field(rooms: CampusHarness) -> None:
    (bound_status, bound), (extra_status, extra) = await _get_all(
        rooms, "/api/v1/rooms/Library?min_capacity=0", "/api/v1/rooms/Library?min_capacty=4"
    )
    assert bound_status == 400, bound
    assert bound["error"] == "InvalidInput" and bound["field"] == "min_capacity"
    assert "greater than or equal to 1" in bound["message"]
    result = await rooms.call("find_study_room", {"building": "Library", "min_capacity": 0})
    assert result.is_error and "min_capacity" in result.content[0].text  # type: ignore[union-attr]
    assert extra_status == 400, extra
    assert extra["field"] == "min_capacty"
    assert "Traceback" not in repr(bound) + repr(extra)


async def test_a_post_twin_reads_a_json_object_and_says_so_when_it_is_not_one(rooms: CampusHarness) -> None:
    async with rooms.rest() as rest:
        booked = await rest.post("/api/v1/rooms/Library/bookings", json={"room": "204"})
        not_an_object = await rest.post("/api/v1/rooms/Library/bookings", content=b"[1, 2]")
        not_json = await rest.post("/api/v1/rooms/Library/bookings", content=b"room=204")
    assert booked.status_code == 201, booked.text
    assert booked.json()["rooms"] == ["Library 204"]
    for refused in (not_an_object, not_json):
        assert refused.status_code == 400, refused.text
        assert "must be a JSON object of the arguments of book_study_room" in refused.json()["message"]


async def test_parity_sees_the_generated_routes_with_their_titles(rooms: CampusHarness) -> None:
    report = rooms.check_parity()
    assert report.ok, report.problems
    assert report.covered["GET /api/v1/rooms/{building}"] == ["find_study_room"]
    assert report.covered["POST /api/v1/rooms/{building}/bookings"] == ["book_study_room"]
    summaries = {
        handler.handler_name: handler.summary
        for route in rooms.app.routes
        for handler in getattr(route, "route_handlers", [])
        if handler.opt.get("campus_operation")
    }
    assert summaries == {"find_study_room": "Find a study room", "book_study_room": "Book a study room"}


async def test_a_callable_description_gets_the_campus_words(rooms: CampusHarness) -> None:
    async with rooms.mcp() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["find_study_room"].description == f"Finds a group study room at {rooms.settings.campus_short_name}."
    assert [(e.tool, dict(e.arguments)) for e in operation_examples(OPERATIONS)] == [
        ("find_study_room", {"building": "Library"})
    ]


def test_a_path_parameter_that_is_no_field_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"path parameter\(s\) room_id of /api/v1/rooms/\{room_id\} are not fields"):
        Operation(
            name="get_room",
            title="One room",
            description="One room.",
            scope="rooms",
            input_model=RoomQuery,
            output_model=RoomList,
            run=find_rooms,
            path="/api/v1/rooms/{room_id}",
        )
    with pytest.raises(ValueError, match="no_route_reason"):
        Operation(
            name="get_room",
            title="One room",
            description="One room.",
            scope="rooms",
            input_model=RoomQuery,
            output_model=RoomList,
            run=find_rooms,
        )
