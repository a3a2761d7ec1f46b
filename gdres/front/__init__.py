"""What users call: the command line (cli.py), the MCP server (mcp.py) and the Python API (api.py)."""
