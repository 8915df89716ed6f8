"""A gunicorn config that shows the library's access and task lines (docs/telemetry.md).

    .venv/bin/gunicorn -c examples/gunicorn_logging.py -k gthread -w 2 examples.echo:app

gunicorn configures only its own loggers, so without this the ``a2a_wsgi.access``
and ``a2a_wsgi.tasks`` lines go nowhere. gunicorn lays ``logconfig_dict`` over its
defaults one key deep: every key it uses (``root``, its two loggers) is named here.
"""

from __future__ import annotations

from typing import Any

logconfig_dict: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"generic": {
        "format": "%(asctime)s [%(process)d] [%(levelname)s] %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "generic",
                             "stream": "ext://sys.stderr"}},
    "root": {"level": "WARNING", "handlers": ["console"]},
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": ["console"], "propagate": False},
        # gunicorn's own request line would repeat ours
        "gunicorn.access": {"level": "INFO", "handlers": [], "propagate": False},
        "a2a_wsgi": {"level": "INFO", "handlers": ["console"], "propagate": False},
    },
}
