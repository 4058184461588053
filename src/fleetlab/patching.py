"""Temporary attribute swaps, for the few upstream behaviours that offer no hook (see each caller's comment).

Every swap is explicit and scoped: `with swapped(module, "name", replacement):` puts the old value back on exit,
error or not. Nothing is swapped at import time."""

from __future__ import annotations

import contextlib

_MISSING = object()


@contextlib.contextmanager
def swapped(owner, name: str, value):
    """`owner.name = value` inside the block only."""
    old = getattr(owner, name, _MISSING)
    setattr(owner, name, value)
    try:
        yield
    finally:
        if old is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, old)
