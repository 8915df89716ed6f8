"""examples/flask_site.py under gunicorn -w 2: Flask-Login (session or token) is the caller."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from host_site_checks import PASSWORD, Site, check_plain_http, check_site, running_site

pytestmark = pytest.mark.slow
pytest.importorskip("flask_login")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("flask_site")
    with running_site("examples.flask_site:site", tmp, {}) as base:
        yield Site(base, lambda user: _flask_login(base, user), "/token",
                   lambda user: f"user:{user}")


def _flask_login(base: str, user: str) -> requests.Session:
    browser = requests.Session()
    refused = browser.post(base + "/login", data={"username": user, "password": "nope"},
                           timeout=10, allow_redirects=False)
    assert refused.status_code == 403
    answer = browser.post(base + "/login", data={"username": user, "password": PASSWORD},
                          timeout=10, allow_redirects=False)
    assert answer.status_code == 302, answer.text
    assert "session" in browser.cookies
    return browser


def test_the_flask_login_is_the_agents_caller(site: Site) -> None:
    check_site(site)


def test_card_validators_and_chunked_bodies_pass_through(site: Site) -> None:
    check_plain_http(site)
