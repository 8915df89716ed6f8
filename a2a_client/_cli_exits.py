"""The ``a2a`` command's exit codes: the documented contract that tells failure kinds apart."""

from __future__ import annotations

__all__ = [
    "EXIT_CODES", "EXIT_CTRL_C", "EXIT_HTTP_STATUS", "EXIT_INTERRUPTED", "EXIT_OK",
    "EXIT_PROTOCOL", "EXIT_RPC_ERROR", "EXIT_TASK_FAILED", "EXIT_TRANSPORT", "EXIT_USAGE",
    "EXIT_WAIT_TIMEOUT",
]

EXIT_OK = 0
EXIT_TASK_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 3
EXIT_RPC_ERROR = 4
EXIT_TRANSPORT = 5
EXIT_HTTP_STATUS = 6
EXIT_PROTOCOL = 7
EXIT_WAIT_TIMEOUT = 8
EXIT_CTRL_C = 130

#: code -> meaning, the documented contract (docs/client.md repeats it).
EXIT_CODES = {
    EXIT_OK: "success (task completed, message reply, or the command's answer)",
    EXIT_TASK_FAILED: "the task ended failed, canceled or rejected",
    EXIT_USAGE: "bad command line",
    EXIT_INTERRUPTED: "the task needs input or authentication (input-required, auth-required)",
    EXIT_RPC_ERROR: "the agent answered with an A2A error (e.g. task not found)",
    EXIT_TRANSPORT: "the agent could not be reached, or a timeout expired",
    EXIT_HTTP_STATUS: "an HTTP error status without an A2A error body (401, 404, 502…)",
    EXIT_PROTOCOL: "the agent's answer was not valid A2A",
    EXIT_WAIT_TIMEOUT: "--wait ran out of time before the task settled",
    EXIT_CTRL_C: "interrupted by Ctrl-C",
}
