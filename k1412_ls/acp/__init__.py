"""K1412 as an Agent Client Protocol agent (``k1412 acp``): an adapter over the shared runtime, beside ``lsp/``.

Start-up is lean (``acp_server``, ``wire``, ``capabilities`` import only the standard library): ``initialize`` is
answered while the protocol SDK (``agent-client-protocol``) loads in a thread; everything after it goes
through the SDK's agent connection.
"""
