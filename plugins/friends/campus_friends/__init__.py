"""Campus MCP plugin: friends."""
