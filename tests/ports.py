"""A port of 127.0.0.1 held for a test: bound, never listening, so that connections to it are
refused, no other process (the other pytest-xdist worker's servers and connections) is given
it, and a server that sets ``SO_REUSEADDR`` (aiohttp, uvicorn and asyncio servers do) can still
listen on it later. A port looked up and closed at once is free for anyone until it is used."""

from __future__ import annotations

import socket

__all__ = ["hold_port"]


def hold_port(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: a free port; ``getsockname()[1]`` says which),
    not listening; close it (or use it as a context manager) to let the port go.

    Raises:
        OSError: the port is in use by a listening socket or one without ``SO_REUSEADDR``.
    """
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock
