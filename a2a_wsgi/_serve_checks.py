"""What ``a2a serve`` checks before gunicorn starts, so a server that cannot start says why once.

Left to gunicorn, a mistyped module is a traceback from every worker, and a busy
port five seconds of retries then "Can't connect". Here the address is bound
once (and released) and the app is imported, and its task stores opened, in a
child forked for that alone (:func:`probe_app`): the process that becomes
gunicorn's master never imports the app, so each worker still imports it after
the fork, as gunicorn does without ``--preload``. A failure is a
:class:`StartupFailure`: one line and an exit code of its own (:data:`EXIT_CODES`,
listed in docs/deployment.md).
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import select
import signal
import socket
import sys
import time
import traceback
from types import FrameType, ModuleType

from ._store_choice import MemoryStoreInManyProcessesError, MissingExtraError, choose_store
from .stores._base import StoreOpenError

__all__ = [
    "EXIT_USAGE",
    "EXIT_MODULE",
    "EXIT_APP",
    "EXIT_ADDRESS",
    "EXIT_EXTRA",
    "EXIT_STORE",
    "EXIT_GRPC",
    "EXIT_STOPPED",
    "EXIT_CODES",
    "StartupFailure",
    "check_address",
    "check_app",
    "probe_app",
]

#: The command line is wrong (MODULE:OBJECT without a colon, a bad --bind).
EXIT_USAGE = 2
#: The module cannot be imported: no such module, its import raised, or it did not end
#: within ``--timeout``.
EXIT_MODULE = 10
#: The module has no such object, or the object is not a WSGI app.
EXIT_APP = 11
#: The address cannot be listened on: in use, not this host's, or a privileged port.
EXIT_ADDRESS = 12
#: A task store needs an extra that is not installed (``a2a-wsgi[postgres]``).
EXIT_EXTRA = 13
#: A task store cannot be opened: bad URL, unreachable database, a folder that cannot be
#: made, an in-memory store for several workers.
EXIT_STORE = 14
#: ``--grpc``: its address cannot be listened on, or the gRPC process did not start.
EXIT_GRPC = 15
#: A second Ctrl-C stopped the server without waiting for its running tasks (or Ctrl-C
#: came while the checks ran).
EXIT_STOPPED = 130

#: Every exit code of ``a2a serve`` with what it means (docs/deployment.md lists them).
EXIT_CODES = {
    0: "stopped (Ctrl-C or SIGTERM, after the running tasks finished or the wait ran out)",
    1: "gunicorn stopped on an error of its own",
    EXIT_USAGE: "bad command line",
    3: "a worker failed to boot after the checks passed (gunicorn's code)",
    4: "a worker's app failed to load after the checks passed (gunicorn's code)",
    EXIT_MODULE: "the module cannot be imported (or not within --timeout)",
    EXIT_APP: "the module has no such object, or it is not a WSGI app",
    EXIT_ADDRESS: "the address cannot be listened on (in use, not this host's, no permission)",
    EXIT_EXTRA: "a task store needs an extra that is not installed",
    EXIT_STORE: "a task store cannot be opened",
    EXIT_GRPC: "the --grpc address cannot be listened on, or the gRPC process did not start",
    EXIT_STOPPED: "a second Ctrl-C stopped it without waiting for the running tasks (or a "
                  "first one during the checks)",
}


class StartupFailure(Exception):
    """``a2a serve`` cannot start: ``str()`` is one line, ``code`` the exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(" ".join(message.split()))
        self.code = code


def check_address(host: str, port: int) -> None:
    """Bind and listen on ``host:port`` as gunicorn will, then let go; else StartupFailure."""
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            # As gunicorn binds: a port whose old connections sit in TIME_WAIT is free.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(1)
    except socket.gaierror as exc:
        raise StartupFailure(EXIT_ADDRESS, f"cannot listen on {shown}: unknown host "
                                           f"({exc.strerror})") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise StartupFailure(EXIT_ADDRESS, f"cannot listen on {shown}: another process "
                                               "is listening there; stop it or choose another "
                                               "port with --bind") from None
        hint = " (ports below 1024 need root)" if exc.errno == errno.EACCES and port < 1024 \
            else ""
        raise StartupFailure(EXIT_ADDRESS, f"cannot listen on {shown}: "
                                           f"{exc.strerror or exc}{hint}") from None


def check_app(target: str, *, workers: int) -> None:
    """Import ``target`` (``module:object``) as a worker will and open the task stores of
    the A2A apps it made; StartupFailure says what is wrong. Run it in a child that
    exits afterwards (:func:`probe_app`): the import stays out of the calling process."""
    from ._gunicorn_internals import AppImportError, import_app

    module = target.partition(":")[0]
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and _names_the_target(exc.name, module):
            raise StartupFailure(EXIT_MODULE, _no_module(exc.name, target)) from None
        raise StartupFailure(EXIT_MODULE, _raised(f"importing {module} failed", exc)) from None
    except Exception as exc:
        raise StartupFailure(EXIT_MODULE, _raised(f"importing {module} failed", exc)) from None
    try:
        loaded = import_app(target)  # the module is imported: this finds (or calls) the object
    except AppImportError as exc:
        raise StartupFailure(EXIT_APP, _app_problem(exc, target)) from None
    except Exception as exc:
        raise StartupFailure(EXIT_APP, _raised(target, exc)) from None
    from ._agent import Agent  # the server's modules load in this check's child only

    if isinstance(loaded, type) and issubclass(loaded, Agent):
        found = _wsgi_apps(sys.modules.get(module))
        hint = f"; the module's apps: {', '.join(found)}" if found else ""
        raise StartupFailure(EXIT_APP, f"{target} is an Agent class, not a WSGI app: serve "
                                       f"A2AApp({loaded.__name__}()){hint}")
    _check_stores(multiprocess=workers > 1)


def probe_app(target: str, *, workers: int, timeout: float | None = None) -> None:
    """:func:`check_app` in a forked child; raise its StartupFailure here.

    The child's own output (the app's prints and log lines, which every worker
    writes again) goes nowhere; its verdict comes back on a pipe. A child still
    at it after ``timeout`` seconds (None: no limit), or when Ctrl-C interrupts
    the wait, is killed.
    """
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: check, say the verdict, exit without cleaning up the parent's
        os.close(read_end)
        code = 0
        try:
            _silence_output()
            check_app(target, workers=workers)
            verdict = b"0\n"
        except StartupFailure as failure:
            code = failure.code
            verdict = f"{failure.code}\n{failure}".encode(errors="replace")
        except BaseException as exc:  # SystemExit from the module, say
            code = EXIT_MODULE
            verdict = f"{EXIT_MODULE}\n{_raised(target, exc)}".encode(errors="replace")
        os.write(write_end, verdict)
        os._exit(code)
    os.close(write_end)
    interrupted = finished = False

    def stop_the_child(signum: int, frame: FrameType | None) -> None:
        # Only a flag and a kill here: under gevent this may run in the event loop, where
        # a KeyboardInterrupt would be printed as the loop's own error.
        nonlocal interrupted
        interrupted = True
        os.kill(pid, signal.SIGKILL)

    previous = signal.signal(signal.SIGINT, stop_the_child)
    try:
        verdict, finished = _read_all(read_end, timeout)
    finally:
        signal.signal(signal.SIGINT, previous)
        os.close(read_end)
        if not finished:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if interrupted:
        raise KeyboardInterrupt
    if not finished:
        raise StartupFailure(EXIT_MODULE, f"importing {target} and opening its task stores "
                                          f"did not finish within {timeout:g} s (--timeout)")
    code_text, _, message = verdict.decode(errors="replace").partition("\n")
    if code_text.strip() == "0":
        return
    if not code_text.strip().isdigit():
        raise StartupFailure(EXIT_MODULE, f"importing {target} ended the process "
                                          f"({_status_text(status)})")
    raise StartupFailure(int(code_text), message)


def _read_all(fd: int, timeout: float | None) -> tuple[bytes, bool]:
    """What the child writes until it exits, and whether it did within ``timeout``.

    Each read waits in select(): under gevent that lets the event loop run, and
    gevent's os.close of our copy of the write end (deferred to the loop) happens
    only then, so the end of the pipe can come."""
    deadline = None if timeout is None else time.monotonic() + timeout
    chunks: list[bytes] = []
    while True:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not select.select([fd], [], [], left)[0]:
            return b"".join(chunks), False
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)


def _silence_output() -> None:
    """Point this process's stdout and stderr at /dev/null (and logging with them)."""
    import logging

    logging.disable(logging.CRITICAL)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _names_the_target(missing: str, module: str) -> bool:
    """Whether the missing module is the target module or one of its packages."""
    return module == missing or module.startswith(missing + ".")


def _no_module(missing: str, target: str) -> str:
    if missing.endswith(".py"):
        hint = f"a module name, not a file: {missing[:-3].replace('/', '.')}:" \
               f"{target.partition(':')[2]}"
    else:
        hint = "run from the folder that holds it, or put that folder on PYTHONPATH"
    return f"no module named {missing!r} (from {target}; {hint})"


#: importlib's frames: its frozen bootstrap's ("<frozen importlib._bootstrap>") and its package's.
_IMPORTLIB = ("<frozen importlib", os.path.dirname(importlib.__file__) + os.sep)


def _raised(what: str, exc: BaseException) -> str:
    """'WHAT: Error: message (file, line N)', N the innermost line outside importlib,
    gunicorn (its files and ._gunicorn_internals) and this module: where the app's code
    failed."""
    from ._gunicorn_internals import in_gunicorn

    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    # by where the files are: a user's own folder may be named "gunicorn" (CI's was)
    ours = [f for f in frames if not (f.filename.startswith(_IMPORTLIB)
                                      or f.filename == __file__ or in_gunicorn(f.filename))]
    if ours:
        last = ours[-1]
        # normpath: Python 3.10 names a module found through the "." of sys.path
        # ".../folder/./module.py"; 3.11+ name it ".../folder/module.py"
        where = f" ({os.path.normpath(last.filename)}, line {last.lineno})"
    return f"{what}: {type(exc).__name__}: {exc}{where}"


def _app_problem(exc: Exception, target: str) -> str:
    """What gunicorn found wrong with the object, with the apps the module has."""
    module, _, name = target.partition(":")
    text = str(exc)
    found = _wsgi_apps(sys.modules.get(module))
    hint = f" (the module's apps: {', '.join(found)})" if found else ""
    if re.match(r"Failed to find attribute '([^']+)'", text):
        return f"module {module!r} has no attribute {name!r}{hint}"
    if "must be callable" in text:
        return f"{target} is not a WSGI app (not callable){hint}"
    return f"{target}: {text.rstrip('.')}{hint}"


def _wsgi_apps(module: ModuleType | None) -> list[str]:
    """The module's A2AApp objects, by name: what the user probably meant."""
    if module is None:
        return []
    from ._app import A2AApp

    return sorted(name for name, value in vars(module).items()
                  if isinstance(value, A2AApp) and not name.startswith("_"))


def _check_stores(*, multiprocess: bool) -> None:
    """Open, then close, the store each A2A app of this process would open at boot."""
    from ._app import A2AApp
    from ._process import registered
    from .stores import open_store

    for app in registered():
        if not isinstance(app, A2AApp):
            continue
        origin = "store=" if app.store is not None else "A2A_STORE="
        try:
            spec = choose_store(app.store, multiprocess=multiprocess)
            if not isinstance(spec, str):
                continue  # an instance: opened when the module made it
            store = open_store(spec)
        except MemoryStoreInManyProcessesError as exc:
            raise StartupFailure(EXIT_STORE, str(exc)) from None
        except MissingExtraError as exc:
            raise StartupFailure(EXIT_EXTRA, str(exc)) from None
        except StoreOpenError as exc:
            raise StartupFailure(EXIT_STORE, str(exc)) from None
        except Exception as exc:
            shown = _redacted(str(app.store or os.environ.get("A2A_STORE", "")))
            reason = _redacted(str(exc)) or type(exc).__name__
            raise StartupFailure(EXIT_STORE, f"cannot open the task store {origin}{shown}: "
                                             f"{reason}") from None
        store.close()


def _redacted(text: str) -> str:
    """``text`` with the password of any URL in it replaced by ``***``."""
    return re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)
