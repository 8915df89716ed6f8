"""An A2AApp behind observe(), composed as A2AApp.__call__ will compose it (no OpenTelemetry)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from a2a_core.http import HttpRequest, HttpResponse
from a2a_core.observe import CARD, CallRecord
from a2a_wsgi import A2AApp
from a2a_wsgi.telemetry import call_record, observe

__all__ = ["observed"]

_current: ContextVar[CallRecord | None] = ContextVar("test_call_record", default=None)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def observed(app: A2AApp) -> WSGIApp:
    """``app`` behind :func:`observe`, its requests carrying the record to the dispatcher.

    Stands in for the two lines A2AApp and the Dispatcher gain when the app
    calls observe() itself (``record=call_record(environ)`` on each
    HttpRequest, the card route noting its binding): both shims leave a
    request alone when it has its record already, and the outer observe()
    makes an inner one pass through, so this stays correct after that.
    """
    dispatcher = app.dispatcher
    handle, card_response = dispatcher.handle, dispatcher.card_response

    def handle_with_record(request: HttpRequest, **options: Any) -> HttpResponse:
        if request.record is None:
            request = dataclasses.replace(request, record=_current.get())
        return handle(request, **options)

    def card_noting_binding(request: HttpRequest, **options: Any) -> HttpResponse:
        if request.record is not None and request.record.binding is None:
            request.record.start(CARD)
        return card_response(request, **options)

    setattr(dispatcher, "handle", handle_with_record)  # noqa: B010
    setattr(dispatcher, "card_response", card_noting_binding)  # noqa: B010

    def served_app(environ: dict[str, Any], start_response: Callable[..., Any]
                   ) -> Iterable[bytes]:
        def handle_request(environ: dict[str, Any], start_response: Callable[..., Any]
                           ) -> Iterable[bytes]:
            token = _current.set(call_record(environ))
            try:
                return app(environ, start_response)
            finally:
                _current.reset(token)

        return observe(environ, start_response, handle_request)

    return served_app


