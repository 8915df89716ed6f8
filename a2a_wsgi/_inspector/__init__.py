"""The agent's built-in inspector: a browser page at ``<mount>/inspector`` to try the agent.

The page (:mod:`a2a_inspector`) shows the card, chats with the
agent in 0.3 or 1.0, lists and opens tasks, and logs every exchange with a
``curl`` line. It calls the agent from the browser, on the same origin as the
app serving it, so no proxy and no CORS are involved.

* :func:`inspector_app` is the page as a WSGI app, for composing yourself;
* :func:`inspector_response` is what :class:`~a2a_wsgi._app.A2AApp` calls for
  each request when the inspector is on: it answers ``/inspector`` and below
  (None for any other path), and refuses a caller that is neither on this
  machine (:func:`is_loopback`) nor authenticated
  (:func:`~a2a_wsgi._overrides.put_identity` by a middleware).
"""

from __future__ import annotations

from ._access import is_loopback, may_inspect
from ._app import INSPECTOR_PATH, inspector_app, inspector_response

__all__ = ["INSPECTOR_PATH", "inspector_app", "inspector_response", "is_loopback", "may_inspect"]
