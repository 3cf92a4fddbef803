"""Campus MCP plugin: planning prompts."""
