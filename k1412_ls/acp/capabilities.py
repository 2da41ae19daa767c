"""What K1412 tells an ACP client in ``initialize``, and what it learns about the client.

Standard library only: the reply is built before the protocol SDK has loaded (``wire`` answers the
first ``initialize`` itself). The agent's own ``initialize`` handler returns the same dict, so both
paths say the same thing. Capabilities are honest: only what ``k1412 acp`` really does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k1412_ls import __version__

# The ACP major version K1412 speaks (the SDK's acp.PROTOCOL_VERSION; a test keeps them equal).
PROTOCOL_VERSION = 1


@dataclass
class ClientState:
    """What the client said in ``initialize``: its file-system methods and who it is."""

    initialized: bool = False
    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False
    name: str = ""


def agent_capabilities() -> dict[str, Any]:
    """Sessions load and list; prompts take text, resource links and embedded text; no MCP, no media."""
    return {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": False, "sse": False},
        "sessionCapabilities": {"list": {}},
    }


def initialize_reply(params: Any, client: ClientState) -> dict[str, Any]:
    """The ``initialize`` result for ``params`` (a dict from the wire); records the client's capabilities."""
    params = params if isinstance(params, dict) else {}
    caps = params.get("clientCapabilities")
    caps = caps if isinstance(caps, dict) else {}
    fs = caps.get("fs") if isinstance(caps.get("fs"), dict) else {}
    client.read_text_file = fs.get("readTextFile") is True
    client.write_text_file = fs.get("writeTextFile") is True
    client.terminal = caps.get("terminal") is True
    info = params.get("clientInfo")
    client.name = str(info.get("name", ""))[:100] if isinstance(info, dict) else ""
    client.initialized = True
    asked = params.get("protocolVersion")
    version = asked if isinstance(asked, int) and 0 <= asked < PROTOCOL_VERSION else PROTOCOL_VERSION
    return {
        "protocolVersion": version,
        "agentCapabilities": agent_capabilities(),
        "authMethods": [],
        "agentInfo": {"name": "k1412", "title": "K1412", "version": __version__},
    }


def is_valid_initialize(params: Any) -> bool:
    """Whether ``params`` has what ``initialize`` requires (an integer protocolVersion)."""
    return isinstance(params, dict) and isinstance(params.get("protocolVersion"), int) \
        and not isinstance(params.get("protocolVersion"), bool) and 0 <= params["protocolVersion"] <= 65535
