"""Request fingerprints are stored beside tasks: their value must not drift between releases.

The two known answers below were computed before the fingerprint's code was made faster
(per-type getters, the default configuration's form worked out once); any change to the
canonical encoding has to change ``FINGERPRINT_SCHEME`` instead.
"""

from __future__ import annotations

from dataclasses import replace

from a2a_core._idempotency import request_fingerprint
from a2a_core.models import (
    AuthenticationInfo,
    DataPart,
    FilePart,
    Message,
    PushNotificationConfig,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TextPart,
)

PLAIN = SendMessageRequest(
    message=Message(message_id="m-1", role=Role.USER, parts=[TextPart(text="hello")])
)
RICH = SendMessageRequest(
    message=Message(
        message_id="m-2", role=Role.USER, context_id="ctx-1",
        parts=[TextPart(text="hi", media_type="text/plain", metadata={"k": [1, 2.5, None]}),
               FilePart(raw=b"\x00\x01", filename="a.bin"), DataPart(data={"x": True})],
        reference_task_ids=["t-9"], extensions=["https://e.test/x"],
    ),
    configuration=SendMessageConfiguration(
        accepted_output_modes=["text/plain"], history_length=3, blocking=False,
        push_notification_config=PushNotificationConfig(
            url="https://h.test/w", token="tok",
            authentication=AuthenticationInfo(schemes=["Bearer"]),
        ),
    ),
    metadata={"trace": "abc"},
    tenant="acme",
)


def test_known_answers() -> None:
    assert request_fingerprint(PLAIN) == (
        "a2db20ab522761715ce538b96b573550c0ab95ceb22a9c9acb396b74ff25627e")
    assert request_fingerprint(RICH) == (
        "c301260b1939a8ea2300f17edcba9cd35fd6d2e5068aad33faa57b87aa9fbd70")


def test_defaults_spelled_out_are_no_change() -> None:
    assert request_fingerprint(replace(PLAIN, configuration=SendMessageConfiguration())) == (
        request_fingerprint(PLAIN))
    assert request_fingerprint(replace(PLAIN, metadata={})) == request_fingerprint(PLAIN)


def test_the_message_id_and_tenant_are_not_part_of_it() -> None:
    other = replace(PLAIN, message=replace(PLAIN.message, message_id="m-9"), tenant="t")
    assert request_fingerprint(other) == request_fingerprint(PLAIN)


def test_any_other_field_is() -> None:
    changed = [
        replace(PLAIN, message=replace(PLAIN.message, parts=[TextPart(text="hello!")])),
        replace(PLAIN, message=replace(PLAIN.message, context_id="c")),
        replace(PLAIN, configuration=SendMessageConfiguration(blocking=False)),
        replace(PLAIN, metadata={"a": 1}),
    ]
    assert len({request_fingerprint(r) for r in changed} | {request_fingerprint(PLAIN)}) == 5
