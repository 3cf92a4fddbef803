"""A course's answer carries what a student reads, not the importer's bookkeeping (issue 16.5):
no ``details_synced_at`` in the tool's answer, its REST twin, its GraphQL type or its output
schema. When the details were refreshed is the advisory's ``course_details`` source."""

from __future__ import annotations

from campus_catalog.graphql import SCHEMA
from campus_catalog.schemas import CourseDetail
from campus_mcp.testing import CampusHarness

INTERNAL = "details_synced_at"


async def test_a_course_answer_has_no_sync_time(demo_campus: CampusHarness) -> None:
    page = await demo_campus.call("search_courses", {"limit": 1})
    assert page.structured_content is not None
    code = page.structured_content["courses"][0]["code"]
    tool = await demo_campus.call("get_course", {"code": code})
    assert tool.structured_content is not None and tool.structured_content["code"] == code
    assert INTERNAL not in tool.structured_content
    async with demo_campus.rest() as client:
        response = await client.get("/api/v1/catalog/courses/" + code.replace(" ", "%20"))
    assert response.status_code == 200 and INTERNAL not in response.json()
    assert INTERNAL not in CourseDetail.model_json_schema()["properties"]
    assert "detailsSyncedAt" not in str(SCHEMA) and INTERNAL not in str(SCHEMA)
