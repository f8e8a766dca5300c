"""The other doors besides the CLI: MCP server, warm server, git and agent hooks, setup, import, eval."""
