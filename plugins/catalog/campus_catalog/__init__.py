"""Campus MCP plugin: course catalog."""
