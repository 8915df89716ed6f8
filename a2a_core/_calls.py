"""What every call goes through between its binding and its operation.

The three bindings (JSON-RPC, HTTP+JSON, gRPC) read their own framing, then hand the
operation, its params and the version to :meth:`CallPipeline.call`, the one call sequence:
extensions are negotiated, the :class:`~a2a_core._service.CallContext` is built, the
capability gates, the caller gate and the stream admission are applied, and
:class:`~a2a_core._operations.Operations` runs. Whatever goes wrong in there comes back as
one :class:`Failed` (a busy worker, a refused caller, an A2A error, a bug logged here as
an internal error), never as an exception, so the bindings only write the
:class:`Answered` back in their own framing.

The caller gate is where an operation's need of the caller is decided, once
for every binding and version: an operation whose table entry says ``authenticated``
(the extended card) called by an anonymous caller raises the deployment's
:class:`Refused` challenge, when the deployment authenticates at all (``challenge``).
Who the caller is was settled before, by the adapter; this only reads ``ctx.identity``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ._http import HttpRequest, HttpResponse
from ._jsonvalue import JSONValue
from ._observe import UNOBSERVED, CallRecord
from ._operations import Answer, Events, Operations
from ._service import A2AService, CallContext, StreamItem
from ._streaming import closing
from ._tasks import merge_metadata, with_identity
from ._versioning import V0_3
from .errors import InternalError, RPCError
from .extensions import (
    ActivatedExtensions,
    Extension,
    negotiate_extensions,
    parse_extensions_header,
)
from .optable import AnyOperation, check_capability

__all__ = ["Answered", "Busy", "CallPipeline", "Failed", "Refused", "StreamAdmission"]

logger = logging.getLogger("a2a_core.server")

#: What an app without extensions activates for every request (immutable, so shared).
_NONE_ACTIVE = ActivatedExtensions()

class StreamAdmission(Protocol):
    """Decides whether one more stream may open (the adapter knows its capacity)."""

    #: Seconds a refused client should wait before trying again.
    retry_after: int

    def admit(self) -> bool:
        """Take a place for a stream; False when none is free."""

    def release(self) -> None:
        """Give back a place :meth:`admit` took."""


class Busy(Exception):
    """A streaming call found no free stream place (the binding answers 503)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"every stream place is taken; retry in {retry_after} s")
        self.retry_after = retry_after

    def error(self) -> InternalError:
        return InternalError(
            f"Server busy: every stream place of this worker is taken; "
            f"retry in {self.retry_after} s"
        )

    def headers(self) -> list[tuple[str, str]]:
        return [("Retry-After", str(self.retry_after))]


class Refused(Exception):
    """The caller is turned away: 401 (not authenticated) or 403 (authenticated, not allowed).

    ``error`` is the protocol error each binding writes in its own shape (a JSON-RPC
    error object, a ``google.rpc.Status``), answered with HTTP ``status`` and
    ``headers`` (the ``WWW-Authenticate`` challenges, ``Cache-Control``). The
    caller gate raises it; an adapter that refuses a caller before reading the
    body hands it to :meth:`~a2a_core._server.Dispatcher.refuse`.
    """

    def __init__(self, error: RPCError, *, status: int,
                 headers: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(error.message)
        self.error = error
        self.status = status
        self.headers = tuple(headers)

    def __repr__(self) -> str:
        return f"Refused({self.error!r}, status={self.status})"

    def response(self) -> HttpResponse:
        """The answer on a path no binding serves: ``{"error": {"code", "message"}}``."""
        body = json.dumps({"error": {"code": self.status, "message": self.error.message}})
        return HttpResponse(self.status, [("Content-Type", "application/json"), *self.headers],
                            body.encode())


@dataclass(frozen=True, slots=True)
class Failed:
    """A call that ended in an error before its answer: what each binding writes in its
    own shape (a JSON-RPC error, a ``google.rpc.Status`` body, a gRPC status)."""

    error: RPCError
    #: The HTTP status when it is not the binding's usual one for ``error``: 503 when no
    #: stream place is free, a refused caller's 401 or 403 (None: the usual one).
    status: int | None = None
    #: Sent with it: ``Retry-After``, a refused caller's ``WWW-Authenticate`` challenges.
    headers: tuple[tuple[str, str], ...] = ()
    #: The caller gate turned the caller away (:class:`Refused`).
    refused: bool = False

    @classmethod
    def of(cls, exc: Exception) -> Failed:
        """The failure ``exc`` stands for; anything but an A2A error is a bug, logged here
        and answered as an internal error (never shown to the peer)."""
        if isinstance(exc, Busy):
            return cls(exc.error(), 503, tuple(exc.headers()))
        if isinstance(exc, Refused):
            return cls(exc.error, exc.status, exc.headers, refused=True)
        if isinstance(exc, RPCError):
            return cls(exc)
        logger.exception("unhandled error while answering a call", exc_info=exc)
        return cls(InternalError())


@dataclass(frozen=True, slots=True)
class Answered:
    """What :meth:`CallPipeline.call` hands back: the operation's answer or its failure, and
    the response headers every binding sends (``A2A-Version``, ``A2A-Extensions``)."""

    answer: Answer | Failed
    headers: list[tuple[str, str]]


class CallPipeline:
    """Negotiation, context, gates and admission: the one call sequence of the bindings.

    :param challenge: the refusal of an anonymous caller of an
        ``authenticated`` operation (the deployment's 401 and its
        challenges); None: the server authenticates nobody itself, so every
        caller may call every operation the card declares.
    """

    def __init__(
        self,
        service: A2AService,
        operations: Operations,
        *,
        base_url: str | None,
        metadata: Mapping[str, JSONValue] | None,
        extensions: Sequence[Extension],
        stream_admission: StreamAdmission | None,
        challenge: Callable[[], Refused] | None = None,
    ) -> None:
        self.service = service
        self.operations = operations
        self.base_url = base_url
        self.metadata = dict(metadata or {})
        self.extensions = tuple(extensions)
        self.stream_admission = stream_admission
        self.challenge = challenge

    def call(
        self,
        request: HttpRequest,
        operation: AnyOperation,
        params: Mapping[str, JSONValue],
        version: str,
        *,
        base_url: str | None,
        metadata: Mapping[str, JSONValue] | None,
        identity: object,
        tenant: str | None = None,
        record: CallRecord = UNOBSERVED,
    ) -> Answered:
        """The one call sequence: activate, context, run (:meth:`run`); an error becomes
        :class:`Failed`, noted in ``record``."""
        record.operating(operation, params)
        activated: ActivatedExtensions | None = None
        try:
            activated = self.activate(request, params, version)
            ctx = self.context(request, params, version, activated, base_url=base_url,
                               metadata=metadata, identity=identity, tenant=tenant)
            answer: Answer | Failed = self.run(operation, params, ctx, activated, record)
        except Exception as exc:
            answer = Failed.of(exc)
            record.failed(answer.error)
        return Answered(answer, self.response_headers(version, activated))

    def activate(
        self, request: HttpRequest, params: Mapping[str, JSONValue], version: str
    ) -> ActivatedExtensions:
        """Extensions the client asked for (both header spellings) that we activate."""
        if not self.extensions:  # none configured: nothing a client asks for can activate
            return _NONE_ACTIVE
        headers = request.headers
        requested = parse_extensions_header(
            headers.get_all("A2A-Extensions") + headers.get_all("X-A2A-Extensions")
        )
        return negotiate_extensions(
            requested, self.extensions, {"params": params, "version": version}
        )

    def context(
        self,
        request: HttpRequest,
        params: Mapping[str, JSONValue],
        version: str,
        activated: ActivatedExtensions,
        *,
        base_url: str | None,
        metadata: Mapping[str, JSONValue] | None,
        identity: object,
        tenant: str | None = None,
    ) -> CallContext:
        if tenant is None and "tenant" in params and isinstance(params["tenant"], str):
            tenant = params["tenant"]
        return CallContext(
            version=version,
            metadata=self._merged_metadata(metadata, params, identity),
            extensions=dict(activated.by_uri),
            identity=identity,
            tenant=tenant,
            params=params,
            last_event_id=request.headers.get("Last-Event-ID"),
            base_url=base_url or self.base_url,
            client_gone=request.client_gone,
            stream_holder=request.stream_holder,
        )

    def _merged_metadata(
        self,
        per_request: Mapping[str, JSONValue] | None,
        params: Mapping[str, JSONValue],
        identity: object,
    ) -> Mapping[str, JSONValue] | None:
        from_params = params.get("metadata")
        if from_params is not None and not isinstance(from_params, Mapping):
            from_params = None
        merged = merge_metadata(self.metadata, per_request, from_params)
        if identity is None:
            return merged
        return with_identity(merged, identity)

    def run(
        self,
        operation: AnyOperation,
        params: Mapping[str, JSONValue],
        ctx: CallContext,
        activated: ActivatedExtensions,
        record: CallRecord = UNOBSERVED,
    ) -> Answer:
        """Capability gates, the caller gate (:class:`Refused`), stream admission
        (:class:`Busy`), then the operation.

        ``record`` notes what it answers (the task made, the events streamed).
        """
        return record.answered(operation, self._admitted(operation, params, ctx, activated))

    def _admitted(
        self,
        operation: AnyOperation,
        params: Mapping[str, JSONValue],
        ctx: CallContext,
        activated: ActivatedExtensions,
    ) -> Answer:
        check_capability(operation, self.service.agent_card().capabilities, ctx.version)
        if self.challenge is not None and ctx.identity is None \
                and operation.authenticated:
            raise self.challenge()
        admission = self.stream_admission
        if not operation.streams or admission is None:
            return self.operations.run(operation, params, ctx, activated)
        if not admission.admit():
            raise Busy(admission.retry_after)
        try:
            outcome = self.operations.run(operation, params, ctx, activated)
        except BaseException:
            admission.release()
            raise
        if not isinstance(outcome, Events):
            admission.release()
            return outcome
        return Events(_released(outcome.items, admission.release))

    def response_headers(
        self, version: str, activated: ActivatedExtensions | None
    ) -> list[tuple[str, str]]:
        headers = [("A2A-Version", version)]
        value = activated.header_value() if activated is not None else None
        if value:
            headers.append(("A2A-Extensions", value))
            if version == V0_3:
                headers.append(("X-A2A-Extensions", value))
        return headers


def _released(items: Iterator[StreamItem], release: Callable[[], None]) -> Iterator[StreamItem]:
    """``items``, giving its stream place back once, when closed or exhausted."""
    return closing(items, on_close=release)
