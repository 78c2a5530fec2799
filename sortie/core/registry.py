"""A generic registry of named plug-ins with helpful misses and lazy entries."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from sortie.core.errors import MissingExtraError, UnknownNameError, did_you_mean

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
        module_name, _, attr = path.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            extra = self._extras.get(name, name)
            raise MissingExtraError(
                f"{self.kind} {name!r} needs: pip install sortie[{extra}] ({exc})"
            ) from exc
        return getattr(module, attr)  # type: ignore[no-any-return, unused-ignore]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)
