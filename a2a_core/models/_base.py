"""The model machinery (frozen, slotted, keyword-only dataclasses) and the enums."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar, get_origin

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Any:
        return lambda f: f



_T = TypeVar("_T")


# A plain ``_model = dataclass(...)`` alias hides the dataclass from mypy (no
# keyword constructor, no ``dataclasses.replace``); dataclass_transform tells it.
@dataclass_transform(frozen_default=True, kw_only_default=True)
def _model(cls: type[_T]) -> type[_T]:
    """Frozen, slotted, keyword-only dataclass whose ``Sequence[...]`` fields hold tuples.

    Every field annotated ``Sequence[...]`` is frozen by a ``__post_init__`` made here
    (see :func:`_sequence_freezer`), ahead of the class's own ``__post_init__`` if it
    writes one: the models are compared and hashed by value, so a list given must
    become a tuple, and a str or a non-sequence there is a TypeError.
    """
    annotations = cls.__dict__.get("__annotations__", {})
    sequences = tuple(name for name, kind in annotations.items() if _is_sequence(kind))
    if sequences:
        own = cls.__dict__.get("__post_init__")
        cls.__post_init__ = _sequence_freezer(cls, sequences, own)  # type: ignore[attr-defined]
    return dataclass(frozen=True, slots=True, kw_only=True)(cls)


def _is_sequence(annotation: object) -> bool:
    """``Sequence[...]``, written as a string (the modules' ``from __future__ import
    annotations``) or as the type itself."""
    if isinstance(annotation, str):
        return annotation.startswith("Sequence[")
    return get_origin(annotation) is Sequence


def _sequence_freezer(
    cls: type, names: tuple[str, ...], then: Callable[[Any], None] | None
) -> Callable[[Any], None]:
    """``__post_init__``: :func:`_freeze` the ``names`` unless each already is a tuple.

    Generated per class (one ``__class__`` test per field, no loop): tasks and
    messages are built on every update, and a decoded one already holds tuples.
    """
    test = " or ".join(f"self.{name}.__class__ is not tuple" for name in names)
    source = (
        "def __post_init__(self):\n"
        f"    if {test}:\n"
        f"        _freeze(self, {', '.join(map(repr, names))})\n"
        + ("    _then(self)\n" if then is not None else "")
    )
    namespace: dict[str, Any] = {"_freeze": _freeze, "_then": then}
    exec(source, namespace)  # generated from the field names, as _evolver's code is
    made: Callable[[Any], None] = namespace["__post_init__"]
    made.__qualname__ = f"{cls.__qualname__}.__post_init__"
    return made


def evolve(obj: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace`` for the models: a copy of ``obj`` with ``changes``.

    The same result (the constructor runs, ``__post_init__`` included; an unknown
    field is a TypeError), in one call of code generated once per class instead
    of replace's per-field reflection: tasks are rebuilt on every update.
    """
    cls = obj.__class__
    if cls not in _EVOLVERS:
        _EVOLVERS[cls] = _evolver(cls)
    result: _T = _EVOLVERS[cls](obj, **changes)
    return result


#: Model class -> its generated ``(obj, **changes) -> copy``.
_EVOLVERS: dict[type, Callable[..., Any]] = {}
#: Stands for "not given" in the generated code (None is a value a field may take).
_KEEP = object()


def _evolver(cls: type) -> Callable[..., Any]:
    names = [f.name for f in fields(cls) if f.init]  # (every model field is one)
    params = ", ".join(f"{name}=_KEEP" for name in names)
    args = ", ".join(f"{name}=_obj_.{name} if {name} is _KEEP else {name}" for name in names)
    source = f"def evolve(_obj_, /, *, {params}):\n    return _cls_({args})\n"
    namespace: dict[str, Any] = {"_cls_": cls, "_KEEP": _KEEP}
    exec(source, namespace)  # generated from the field names, as dataclasses' own __init__ is
    made: Callable[..., Any] = namespace["evolve"]
    return made


def _freeze(obj: Any, *names: str) -> None:
    """Turn the named sequence fields into tuples (frozen dataclasses need object.__setattr__)."""
    for name in names:
        value = getattr(obj, name)
        if value is not None and value.__class__ is not tuple:
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"{type(obj).__name__}.{name} must be a sequence")
            object.__setattr__(obj, name, tuple(value))


def _freeze_requirements(obj: Any) -> None:
    """Scopes as tuples, so a card built with lists equals its decoded form."""
    requirements = tuple(
        {name: tuple(scopes) for name, scopes in requirement.items()}
        for requirement in obj.security_requirements
    )
    object.__setattr__(obj, "security_requirements", requirements)


class TaskState(enum.Enum):
    """Every state of a task. ``UNKNOWN`` is a decoding fallback, never a real state."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    AUTH_REQUIRED = "auth_required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    UNKNOWN = "unknown"

    #: Members are singletons compared by identity: hashing by identity agrees, and skips
    #: Enum's Python-level __hash__ on every set and dict lookup (state checks are hot).
    __hash__ = object.__hash__

    def __str__(self) -> str:
        """The state as people write it (A2A 0.3's spelling): ``input-required``.

        For printing only; the wire codecs spell states themselves (a2a_core.wire).
        """
        return self.value.replace("_", "-")

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL

    @property
    def is_interrupted(self) -> bool:
        return self in _INTERRUPTED


_TERMINAL = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)
_INTERRUPTED = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})


class Role(enum.Enum):
    USER = "user"
    AGENT = "agent"

    __hash__ = object.__hash__  # as TaskState's

    def __str__(self) -> str:
        """``user`` or ``agent``: for printing only (the wire codecs spell roles themselves)."""
        return self.value
