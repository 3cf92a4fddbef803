"""The advisor message names the product from its setting, not a literal "Campus MCP"."""

from __future__ import annotations

from campus_mcp.base.settings import Settings


def test_the_default_advisor_message_names_the_configured_product() -> None:
    renamed = Settings(product_name="Husky Planner", campus_short_name="NEU")
    assert renamed.advisor_text.startswith("Husky Planner is not an official NEU service")
    assert "Campus MCP" not in renamed.advisor_text
    # The default deployment reads as before.
    assert Settings().advisor_text.startswith("Campus MCP is not an official WIT service")


def test_a_message_of_its_own_may_leave_the_product_out() -> None:
    own = Settings(advisor_message="Check with {campus} advising.", campus_short_name="WIT")
    assert own.advisor_text == "Check with WIT advising."
