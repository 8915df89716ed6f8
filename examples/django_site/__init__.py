"""A minimal Django project whose users are the agent's callers.

    .venv/bin/pip install -e '.[django]'
    gunicorn -k gthread -w 2 --threads 8 examples.django_site.wsgi:application

On its first start it creates its SQLite database (``$DJANGO_SITE_DB``, else
``db.sqlite3`` in this folder) and the demo users ``alice`` and ``bob``, whose
password is ``$DEMO_PASSWORD`` (default ``demo-pass``). Log in with Django's
own form at ``/accounts/login/`` (the session cookie is then the agent's
caller), or get a token for programs with ``POST /accounts/token/``
(``username``, ``password``) and send ``Authorization: Bearer <token>``. The
agent is at ``/a2a/``, its card at ``/a2a/.well-known/agent-card.json``.
"""
