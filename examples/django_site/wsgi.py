"""The site's WSGI application; its first start creates the database and the demo users.

    gunicorn -k gthread -w 2 --threads 8 examples.django_site.wsgi:application

Each worker imports this module; a file lock next to the database lets one
of them migrate and create the users while the others wait.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_site.settings")

import django  # noqa: E402
from django.conf import settings  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

DEMO_USERS = ("alice", "bob")


def bootstrap() -> None:
    """Migrate the database and create the demo users that are missing (once, under a lock)."""
    database = Path(settings.DATABASES["default"]["NAME"])
    database.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{database}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        call_command("migrate", verbosity=0, interactive=False)
        users = get_user_model().objects
        password = os.environ.get("DEMO_PASSWORD", "demo-pass")
        for name in DEMO_USERS:
            if not users.filter(username=name).exists():
                users.create_user(name, password=password)


bootstrap()
application = get_wsgi_application()
