"""MCP: tools from the Model Context Protocol servers the user configured, as K1412 tools.

The only room that imports the ``mcp`` SDK (an import-linter contract keeps it out of every other layer).
``source`` starts a run's servers and offers their tools, ``connections`` holds the sessions on a private
event loop, ``stdio_process`` starts a stdio server in the run's sandbox, ``schemas`` makes names and
schemas fit a provider, ``mcp_tools`` turns a call into a K1412 tool result. See docs/mcp.md.
"""
