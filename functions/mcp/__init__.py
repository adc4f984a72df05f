"""The MCP endpoint's Lambda function (streamable HTTP at /mcp)."""
