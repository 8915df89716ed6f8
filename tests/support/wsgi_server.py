"""A WSGI app on an ephemeral loopback port, served by werkzeug in a thread.

Lives here rather than in a conftest so that test modules can import it by a name
no other directory shares (``conftest`` is one module name for every directory).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from werkzeug.serving import make_server

__all__ = ["Served"]


class Served:
    """A WSGI app listening on an ephemeral port; ``url`` has no trailing slash."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()
