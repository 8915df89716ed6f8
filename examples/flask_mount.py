"""An A2A agent mounted under ``/a2a`` beside a Flask site, by plain WSGI composition.

    .venv/bin/pip install -e '.[flask]'             # once: the flask extra
    flask --app examples.flask_mount:flask_app run     # Flask alone
    gunicorn -k gthread examples.flask_mount:app        # Flask + the agent under /a2a

werkzeug's DispatcherMiddleware moves the ``/a2a`` prefix into SCRIPT_NAME,
so the agent sees its own paths: the card is at ``/a2a/.well-known/agent-card.json``
and JSON-RPC at ``/a2a/``. The card advertises the prefixed URL the request came in
on (SCRIPT_NAME included); set A2A_BASE_URL to name the public URL yourself.
"""

from __future__ import annotations

import os

from flask import Flask
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from a2a_wsgi import A2AApp

from .echo import EchoAgent

flask_app = Flask(__name__)


@flask_app.get("/")
def index() -> str:
    return "A Flask site; the Echo Agent lives under /a2a/."


a2a_app = A2AApp(EchoAgent(), base_url=os.environ.get("A2A_BASE_URL"))

#: The combined WSGI app to give to the server.
app = DispatcherMiddleware(flask_app.wsgi_app, {"/a2a": a2a_app})
flask_app.wsgi_app = app  # `flask run` serves both, too
