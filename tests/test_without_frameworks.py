"""Without Django or Flask importable, ``a2a_wsgi`` imports and serves; only the adapters need them.

Each check runs in a fresh interpreter whose ``sys.meta_path`` refuses the
frameworks, as if they were not installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_BLOCK = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("django", "flask", "flask_login"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None
sys.meta_path.insert(0, Blocked())
"""

_SERVE = _BLOCK + """
import a2a_wsgi, a2a_wsgi.frameworks, a2a_client
from a2a_wsgi import A2AApp
from examples.caller_agent import CallerAgent
app = A2AApp(CallerAgent())
seen = []
environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/.well-known/agent-card.json",
           "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1",
           "wsgi.url_scheme": "http"}
body = b"".join(app(environ, lambda status, headers, exc=None: seen.append(status)))
assert seen == ["200 OK"], seen
assert b"Caller Agent" in body
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "flask"))
assert not loaded, loaded
print("ok")
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={"PYTHONPATH": str(ROOT)})


def test_a2a_wsgi_imports_and_serves_without_django_or_flask() -> None:
    done = _run(_SERVE)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_adapters_say_which_framework_is_missing() -> None:
    for module, missing in (("a2a_wsgi.frameworks.django", "django"),
                            ("a2a_wsgi.frameworks.flask", "flask")):
        done = _run(_BLOCK + f"import {module}")
        assert done.returncode != 0
        assert f"No module named '{missing}" in done.stderr, done.stderr
