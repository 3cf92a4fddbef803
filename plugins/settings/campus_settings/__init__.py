"""Campus MCP plugin: calendar settings."""
