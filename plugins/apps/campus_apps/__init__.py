"""Campus MCP plugin: interactive views."""
