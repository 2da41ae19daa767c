"""The tool layer: every tool the model can call, and the services those tools stand on.

The seams live here at the top: ``registry`` (a tool is a function with a pydantic argument model),
``ports`` (what a tool gets from the run it serves), ``errors`` and ``facts`` (what a result tells the
evidence gate), plus the small tool modules ``git`` and ``plan_memory``. Below them, one room per
responsibility: ``files/`` (documents, file tools, patches, search), ``processes/`` (commands and
background processes), ``approval/`` (which commands are asked about), ``undo/`` (what a run changed and
how it goes back), ``mcp/`` (tools from the user's MCP servers; the only importer of the ``mcp`` SDK) and
``sandbox/`` (everything that confines a command). ``sandbox/`` is the lowest room:
it imports none of the others (pyproject's import contracts enforce the rooms).
"""
