"""Serving an :class:`~a2a_wsgi._app.A2AApp` from inside a host framework's router.

``a2a_wsgi.frameworks.django`` (URL patterns) and ``a2a_wsgi.frameworks.flask``
(a ``mount()`` helper) run the agent after the host's own middleware, so the
host's login (a session, a token middleware, Flask-Login) is the agent's caller.
This package imports neither framework: each adapter imports its own lazily
enough that ``import a2a_wsgi`` works without them (``docs/serving.md``).
"""

from __future__ import annotations

__all__: list[str] = []  # the adapters are the modules .django and .flask
