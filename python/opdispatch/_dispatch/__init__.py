"""The Python dispatcher (opdispatch._dispatch.python). PyTorch: torch._dispatch."""
