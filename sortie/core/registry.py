"""A generic registry of named plug-ins: helpful misses, lazy entries, entry points, one checker.

Every kind of plug-in (agents, backends, mission families, importers, judges) is looked up
the same way, and its arguments checked by one checker (``check_arguments``, one message for
every kind); ``Registry.create(name, args)`` does both and calls it. Packages outside
sortie add plug-ins through entry points (``Registry.add_entry_points``), as Gymnasium's and
inspect_ai's registries let an installed package add environments and tasks.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from typing import Any, Generic, TypeVar

from sortie.core.errors import MissingExtraError, ParameterError, UnknownNameError, did_you_mean

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to plug-ins (classes, factories, functions) of one kind.

    Entries are added with the ``register`` decorator next to their definition, or lazily as
    ``"module:attr"`` strings so that optional dependencies are imported only when used.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}
        self._extras: dict[str, str] = {}
        self._packages: dict[str, str] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Return a decorator that registers its target under ``name``."""

        def decorate(target: T) -> T:
            self.add(name, target)
            return target

        return decorate

    def add(self, name: str, target: T | str, extra: str | None = None) -> None:
        """Register ``target`` (or a lazy ``"module:attr"`` path) under ``name``."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = target
        if extra:
            self._extras[name] = extra

    def add_entry_points(self, group: str) -> None:
        """Register, lazily, what installed packages declare in entry-point group ``group``.

        A name registered already (sortie's own, say) keeps its entry: a package cannot
        replace a plug-in by declaring the same name.
        """
        for point in installed_entry_points(group):
            if point.name not in self._entries:
                self._entries[point.name] = point.value
                self._packages[point.name] = point.dist.name if point.dist else "?"

    @contextmanager
    def override(self, name: str, target: T | str) -> Iterator[None]:
        """Register ``target`` as ``name`` inside a with-block, then restore what was there.

        For tests and experiments: a double stands in for a plug-in, or a new one is added.
        """
        missing = object()
        previous = self._entries.get(name, missing)
        self._entries[name] = target
        try:
            yield
        finally:
            if previous is missing:
                del self._entries[name]
            else:
                self._entries[name] = previous  # type: ignore[assignment]

    def get(self, name: str) -> T:
        """Return the entry called ``name``, importing it if it was registered lazily."""
        if name not in self._entries:
            raise UnknownNameError(self.miss_message(name))
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._load(name, entry)
            self._entries[name] = entry
        return entry

    def create(self, name: str, args: Mapping[str, Any], *, flag: str = "") -> Any:
        """Return plug-in ``name`` called with ``args``, checked against what it takes first.

        ``flag`` is the command-line option that sets the arguments (``-a``), for messages.

        Raises:
            UnknownNameError: nothing is registered as ``name`` (with near names).
            ParameterError: an argument it does not take, or a required one missing.
        """
        target: Any = self.get(name)
        check_arguments(f"{self.kind} {name!r}", target, args, flag=flag)
        try:
            return target(**args)
        except TypeError as error:  # e.g. a **kwargs plug-in handing on an unknown argument
            raise ParameterError(f"{self.kind} {name!r}: {error}") from None

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        return sorted(self._entries)

    def in_order(self) -> list[str]:
        """Return the registered names in the order they were added (the order to show them)."""
        return list(self._entries)

    def miss_message(self, name: str) -> str:
        """Say that ``name`` is unknown, suggest near names and list what exists."""
        hint = did_you_mean(name, self._entries)
        return f"Unknown {self.kind} {name!r}.{hint} Available: {', '.join(self.names())}"

    def _load(self, name: str, path: str) -> T:
        try:
            loaded: T = load_path(path)
        except ImportError as exc:
            if name in self._packages:
                raise MissingExtraError(
                    f"{self.kind} {name!r} of package {self._packages[name]!r} cannot be "
                    f"imported from {path}: {exc}"
                ) from exc
            extra = self._extras.get(name, name)
            raise MissingExtraError(
                f"{self.kind} {name!r} needs: pip install sortie[{extra}] ({exc})"
            ) from exc
        return loaded

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)


def installed_entry_points(group: str) -> metadata.EntryPoints:
    """Return the entry points the installed packages declare in ``group``.

    The installed packages are read once a process: each ``metadata.entry_points`` call reads
    every package's metadata again (a few ms), and a run's start asks for eight groups.
    """
    return _installed().select(group=group)


@functools.cache
def _installed() -> Any:  # Python 3.11's SelectableGroups, 3.12's EntryPoints: both select
    return metadata.entry_points()


def load_path(path: str) -> Any:
    """Return what a lazy ``"module:attr"`` path names, importing the module (the one loader)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def check_arguments(
    what: str,
    target: Callable[..., Any],
    args: Mapping[str, Any],
    *,
    flag: str = "",
    reserved: Collection[str] = (),
) -> None:
    """Check ``args`` against the keyword parameters ``target`` takes (``**kwargs``: any name).

    ``what`` names the plug-in in messages (``agent 'random'``); ``reserved`` are parameters
    the harness sets, never the user.

    Raises:
        ParameterError: an argument it does not take (with a near name, if one is, and the
            ones it takes), a reserved one, or a required one missing.
    """
    parameters = [
        p
        for p in inspect.signature(target).parameters.values()
        if p.name not in reserved and p.kind is not p.VAR_POSITIONAL
    ]
    taken = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    open_ended = any(p.kind is p.VAR_KEYWORD for p in parameters)
    for name in args:
        if name in reserved:
            raise ParameterError(f"{what}: {name!r} is set by the harness, not by its user")
        if name not in taken and not open_ended:
            hint = did_you_mean(name, taken)
            raise ParameterError(
                f"{what} takes no argument {name!r}.{hint} Its arguments: "
                f"{', '.join(taken) or 'none'}"
            )
    missing = [p.name for p in parameters if p.default is p.empty and p.name in taken]
    missing = [name for name in missing if name not in args]
    if missing:
        how = f"; pass them with {flag} NAME=VALUE" if flag else ""
        raise ParameterError(f"{what} needs the argument(s) {', '.join(missing)}{how}")
