"""A gunicorn config for A2A apps: ``gunicorn -c python:a2a_wsgi.gunicorn_config -w 4 app:app``.

It sets two hooks. :func:`~a2a_wsgi._serve.gunicorn_post_worker_init`: each
worker tells its apps how many workers there are and how many streams it may
hold (:mod:`a2a_wsgi._process`), starts them at boot, and ends open streams
cleanly on SIGTERM. ``on_starting``: when workers fail to load the app (each
says why in one line), the master stops with gunicorn's exit code 4 and no
traceback, however many fail at once. ``a2a serve`` needs none of this (it sets the hook itself);
with a config file of your own, import the hook there instead.
"""

from __future__ import annotations

from ._gunicorn_internals import halt_once as on_starting  # noqa: F401 (a setting)
from ._serve import gunicorn_post_worker_init as post_worker_init  # noqa: F401 (a setting)

# Read by gunicorn as settings, not imported by code: the hook's import path stays
# a2a_wsgi._serve.gunicorn_post_worker_init.
__all__: list[str] = []
