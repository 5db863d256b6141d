"""Provider-agnostic LLM layer: specs, transport, routing, limits, retries, cache, the embedded
server and the client (see docs/providers.md).

litellm reads its price table from the package, never from the network (set before any import
of litellm).
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
