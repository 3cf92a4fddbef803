"""Parity of the schedule family with no exemption (issue 11): the student's PUT of a term's
sections is listed as pending (its tool, a write tool, comes with issue 12's confirmation)."""

from __future__ import annotations

from campus_mcp.testing import CampusHarness


async def test_the_schedule_family_has_no_parity_exemption(schedule_campus: CampusHarness) -> None:
    report = schedule_campus.check_parity("schedule")
    assert report.ok, report.problems
    mine = {route for route, plugin in report.routes.items() if plugin == "schedule"}
    assert mine, "the schedule family has REST routes"
    assert not mine & set(report.exempt), sorted(mine & set(report.exempt))
    assert "PUT /api/v1/me/terms/{term}/sections" in report.pending
    # Every other route of the family is the twin of a tool.
    assert mine - set(report.pending) <= set(report.covered)
