"""The first ``k1412 run`` on a machine with no model configured: one screen that says what to do.

Without a configuration file the default model (``luna``) talks to the built-in ``local`` provider at
127.0.0.1:8080. When nothing listens there, a bare connection error would be the first thing a new user
reads; instead the run stops before it starts with the three ways to get a model.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

from k1412_ls.config import BUILTIN_PROVIDERS, K1412Config, ModelSpec

CONNECT_TIMEOUT_S = 0.3


def _listening(base_url: str) -> bool:
    parts = urlsplit(base_url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def setup_screen(config: K1412Config, spec: ModelSpec, has_config_file: bool) -> str | None:
    """The setup screen when no model is configured and the default local server is not running, else None."""
    if has_config_file or spec.provider != "local":
        return None
    provider = config.provider_for(spec)
    if provider.managed or provider.base_url != BUILTIN_PROVIDERS["local"]["base_url"] or _listening(provider.base_url):
        return None
    keys = [name for name in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY") if os.environ.get(name)]
    found = f"\n   ({', '.join(keys)} is set: the first option works now.)" if keys else ""
    return f"""K1412 has no model yet: no configuration file, and no local server answers at {provider.base_url}
(the built-in model '{spec.id}' expects one). Pick one of three:

 1. A hosted model with a key:
      export DEEPSEEK_API_KEY=...
      k1412 run "Create hello.py that prints hello world and run it" --model deepseek-v4-pro{found}

 2. A local server you run (llama.cpp's llama-server, Ollama, vLLM) serving {spec.provider_model}:
      llama-server -m MODEL.gguf --jinja --port 8080      # then run the same command again

 3. A GGUF file K1412 starts and stops for you:
      pip install 'k1412-ls[local]'
      # ~/.config/k1412/config.toml
      default_model = "mine"
      [providers.gguf]
      managed = true
      gguf = "/path/to/model.gguf"
      [models.mine]
      provider = "gguf"
      provider_model = "local"

Nothing was run. Details: docs/configuration.md (models, providers, managed local server)."""
