"""What every call goes through between its binding and its operation.

Both bindings (JSON-RPC, HTTP+JSON) read their own framing, then hand the
operation and its params here: extensions are negotiated, the
:class:`~a2a_core.service.CallContext` is built, the capability gates and the
stream admission are applied, and :class:`~a2a_core.operations.Operations`
runs. The bindings write the answer back in their own framing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from .errors import (
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
)
from .extensions import (
    ActivatedExtensions,
    Extension,
    negotiate_extensions,
    parse_extensions_header,
)
from .http import HttpRequest
from .methods import PUSH_OPERATIONS, STREAMING_OPERATIONS, Operation
from .observe import UNOBSERVED, CallRecord
from .operations import Operations, Outcome, Stream
from .service import A2AService, CallContext, StreamItem
from .streaming import closing
from .tasks import merge_metadata, with_identity
from .versioning import V0_3

__all__ = ["Busy", "CallPipeline", "StreamAdmission"]

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


class CallPipeline:
    """Negotiation, context, gates and admission, shared by the bindings."""

    def __init__(
        self,
        service: A2AService,
        operations: Operations,
        *,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        extensions: Sequence[Extension],
        stream_admission: StreamAdmission | None,
    ) -> None:
        self.service = service
        self.operations = operations
        self.base_url = base_url
        self.metadata = dict(metadata or {})
        self.extensions = tuple(extensions)
        self.stream_admission = stream_admission

    def activate(
        self, request: HttpRequest, params: Mapping[str, Any], version: str
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
        params: Mapping[str, Any],
        version: str,
        activated: ActivatedExtensions,
        *,
        base_url: str | None,
        metadata: Mapping[str, Any] | None,
        identity: Any,
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
        )

    def _merged_metadata(
        self, per_request: Mapping[str, Any] | None, params: Mapping[str, Any], identity: Any
    ) -> Mapping[str, Any] | None:
        from_params = params.get("metadata")
        if from_params is not None and not isinstance(from_params, Mapping):
            from_params = None
        merged = merge_metadata(self.metadata, per_request, from_params)
        if identity is None:
            return merged
        return with_identity(merged, identity)

    def run(
        self,
        operation: Operation,
        params: Mapping[str, Any],
        ctx: CallContext,
        activated: ActivatedExtensions,
        record: CallRecord = UNOBSERVED,
    ) -> Outcome:
        """Capability gates, stream admission (:class:`Busy`), then the operation.

        ``record`` notes what it answers (the task made, the events streamed).
        """
        return record.answered(operation, self._admitted(operation, params, ctx, activated))

    def _admitted(
        self,
        operation: Operation,
        params: Mapping[str, Any],
        ctx: CallContext,
        activated: ActivatedExtensions,
    ) -> Outcome:
        self._check_capabilities(operation, ctx.version)
        admission = self.stream_admission
        if operation not in STREAMING_OPERATIONS or admission is None:
            return self.operations.run(operation, params, ctx, activated)
        if not admission.admit():
            raise Busy(admission.retry_after)
        try:
            outcome = self.operations.run(operation, params, ctx, activated)
        except BaseException:
            admission.release()
            raise
        if not isinstance(outcome, Stream):
            admission.release()
            return outcome
        return Stream(_released(outcome.items, admission.release))

    def _check_capabilities(self, operation: Operation, version: str) -> None:
        caps = self.service.agent_card().capabilities
        if operation in STREAMING_OPERATIONS and not caps.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")
        if operation in PUSH_OPERATIONS and not caps.push_notifications:
            raise PushNotificationNotSupportedError()
        if operation is Operation.GET_EXTENDED_AGENT_CARD and not caps.extended_agent_card:
            if version == V0_3:
                raise ExtendedAgentCardNotConfiguredError()
            raise UnsupportedOperationError("This agent declares no extended agent card")

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
