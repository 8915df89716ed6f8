"""examples/django_site under gunicorn -w 2: Django's login (session or token) is the caller."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
import requests
from host_site_checks import Site, check_plain_http, check_site, running_site

pytestmark = pytest.mark.slow
pytest.importorskip("django")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("django_site")
    env = {"DJANGO_SITE_DB": str(tmp / "site.sqlite3")}
    with running_site("examples.django_site.wsgi:application", tmp, env) as base:
        yield Site(base, lambda user: _django_login(base, user), "/accounts/token/",
                   _pk_identity(base))


def _django_login(base: str, user: str) -> requests.Session:
    """Django's own LoginView, as a browser posts it: with the form's CSRF token."""
    from host_site_checks import PASSWORD

    browser = requests.Session()
    page = browser.get(base + "/accounts/login/", timeout=10)
    assert page.status_code == 200
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, page.text
    without = requests.post(base + "/accounts/login/", timeout=10, allow_redirects=False,
                            data={"username": user, "password": PASSWORD})
    assert without.status_code == 403  # the site's own forms keep their CSRF check
    answer = browser.post(base + "/accounts/login/", timeout=10, allow_redirects=False,
                          data={"username": user, "password": PASSWORD,
                                "csrfmiddlewaretoken": found.group(1)})
    assert answer.status_code == 302, answer.text
    assert "sessionid" in browser.cookies
    return browser


def _pk_identity(base: str) -> Callable[[str], str]:
    """alice and bob are created in that order on first start: user:1 and user:2."""
    return {"alice": "user:1", "bob": "user:2"}.__getitem__


def test_the_django_login_is_the_agents_caller(site: Site) -> None:
    check_site(site)


def test_the_site_itself_still_answers(site: Site) -> None:
    index = requests.get(site.base + "/", timeout=10)
    assert index.status_code == 200 and "logged in: nobody" in index.text
    assert requests.post(site.base + "/accounts/token/", data={"username": "alice",
                         "password": "wrong"}, timeout=10).status_code == 403


def test_card_validators_and_chunked_bodies_pass_through(site: Site) -> None:
    check_plain_http(site)
