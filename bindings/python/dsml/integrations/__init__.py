"""Adapters of dsml.Detector to the parser interfaces of inference servers:
dsml.integrations.vllm (vLLM's ToolParser and ReasoningParser) and
dsml.integrations.sglang (SGLang's format and reasoning detectors).  Each
works as a plain object without the server installed, and registers itself
with the server when the server is importable."""
