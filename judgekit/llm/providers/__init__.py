"""One module per transport: how one attempt reaches an endpoint and what its errors mean.

``openai_compat`` posts to OpenAI-compatible servers (vLLM, llama.cpp, the embedded model) over
judgekit's aiohttp transport; ``litellm`` calls every other provider through
``litellm.acompletion``; ``tools`` adds tool calling through instructor. Each turns its own
failures into ``judgekit.llm.errors.EndpointError`` with a kind, so nothing above it knows a
provider. Only ``litellm`` and ``tools`` import litellm or instructor, and only when called.
"""
