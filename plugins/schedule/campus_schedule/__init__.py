"""Campus MCP plugin: my schedule."""
