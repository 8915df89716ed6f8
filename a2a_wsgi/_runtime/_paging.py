"""ListTasks pages: the page size rule and opaque page tokens (a cursor in the listing order)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

from a2a_core.errors import InvalidParamsError
from a2a_core.models import ListTasksRequest, ListTasksResponse

from ..stores import TaskCursor, TaskRecords, sort_key
from ._defaults import Scope

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "decode_token", "encode_token", "list_page"]

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def list_page(store: TaskRecords, scope: Scope, request: ListTasksRequest) -> ListTasksResponse:
    """Newest first by status timestamp; one extra row says whether a next page exists."""
    size = DEFAULT_PAGE_SIZE if request.page_size is None else request.page_size
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise InvalidParamsError(
            f"pageSize must be between 1 and {MAX_PAGE_SIZE}",
            field_violations={"params.pageSize": f"must be 1..{MAX_PAGE_SIZE}"},
        )
    cursor = decode_token(request.page_token) if request.page_token else None
    tasks, total = store.list(
        owner=scope[0], tenant=scope[1], context_id=request.context_id, status=request.status,
        status_timestamp_after=request.status_timestamp_after, after=cursor, limit=size + 1,
    )
    page = tasks[:size]
    token = encode_token(sort_key(page[-1])) if len(tasks) > size else ""
    return ListTasksResponse(tasks=page, next_page_token=token, page_size=len(page),
                             total_size=total)


def encode_token(cursor: TaskCursor) -> str:
    """An opaque cursor: base64url of [timestamp, task id]."""
    raw = json.dumps([cursor[0].isoformat(), cursor[1]]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str) -> TaskCursor:
    """The cursor in a token we made; anything else is -32602."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        stamp, task_id = json.loads(raw)
        cursor = (datetime.fromisoformat(stamp), task_id)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        cursor = None
    if cursor is None or not isinstance(cursor[1], str) or cursor[0].tzinfo is None:
        raise InvalidParamsError(
            "Invalid page token", field_violations={"params.pageToken": "unknown page token"}
        )
    return cursor
