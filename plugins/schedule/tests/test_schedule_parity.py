"""Parity of the schedule family with no exemption and nothing pending (issue 11): every REST
route is the twin of a tool, the student's PUT of a term's sections included (set_my_sections)."""

from __future__ import annotations

from campus_mcp.testing import CampusHarness


async def test_the_schedule_family_has_no_parity_exemption(schedule_campus: CampusHarness) -> None:
    report = schedule_campus.check_parity("schedule")
    assert report.ok, report.problems
    mine = {route for route, plugin in report.routes.items() if plugin == "schedule"}
    assert mine, "the schedule family has REST routes"
    assert not mine & set(report.exempt), sorted(mine & set(report.exempt))
    assert not mine & set(report.pending), sorted(mine & set(report.pending))
    assert "PUT /api/v1/me/terms/{term}/sections" in mine
    assert mine <= set(report.covered)
