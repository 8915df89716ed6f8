"""The message ``a2a send`` builds: its text, then a part per ``--file`` and ``--data``."""

from __future__ import annotations

import mimetypes
import uuid
from collections.abc import Sequence
from pathlib import Path

from a2a_core._jsonvalue import JSONValue
from a2a_core.models import DataPart, FilePart, Message, Part, Role, TextPart

__all__ = ["build_message"]

#: The media type of a file whose name says nothing (RFC 2046's "just bytes").
UNKNOWN_MEDIA_TYPE = "application/octet-stream"


def file_part(path: str) -> FilePart:
    """The file's bytes inline, its name, and the media type its name suggests.

    :raises ValueError: the file cannot be read (the message names it and why).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"--file {path}: {exc.strerror or exc}") from None
    media_type = mimetypes.guess_type(path)[0] or UNKNOWN_MEDIA_TYPE
    return FilePart(raw=raw, filename=Path(path).name, media_type=media_type)


def build_message(text: str, files: Sequence[str], data: Sequence[JSONValue],
                  context_id: str | None, task_id: str | None) -> Message:
    """A user message; an empty ``text`` adds no text part (then a file or data must)."""
    parts: list[Part] = [TextPart(text=text)] if text else []
    parts += [file_part(path) for path in files]
    parts += [DataPart(data=value) for value in data]
    if not parts:
        raise ValueError("nothing to send: give a TEXT, a --file or a --data")
    return Message(message_id=str(uuid.uuid4()), role=Role.USER, parts=tuple(parts),
                   context_id=context_id, task_id=task_id)
