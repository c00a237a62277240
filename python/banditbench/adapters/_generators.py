"""A cell's own global random generators, for libraries that draw from Python's, NumPy's or
torch's global state instead of taking a seed (HEBO, NePS): each cell seeds its copies with its
seed and swaps them in around its library calls, under one lock, so that cells on several
threads (``bb.run(threads=N)``) stay exact. A swap happens only when another cell's copies are
loaded, and the copies stay loaded after the call."""

from __future__ import annotations

import threading
from typing import Any, Callable, List

# The cell whose copies the global generators hold, and the lock that keeps each swap and call
# whole (Python may switch threads within one).
_LOADED: List[Any] = [None]
_LOCK = threading.Lock()


class Generators:
    """The global generators named (``python``: ``random``; ``numpy``: ``np.random``;
    ``torch``), seeded with ``seed``; :meth:`build` and :meth:`call` run library code with
    them."""

    def __init__(self, seed: int, *, python: bool = False, numpy: bool = True,
                 torch: bool = False):
        import random

        import numpy as np

        self._mods = (random if python else None, np if numpy else None,
                      __import__("torch") if torch else None)
        self._seed = seed
        self._state: Any = None

    def _get(self) -> Any:
        random, np, torch = self._mods
        return (random.getstate() if random else None,
                np.random.get_state() if np else None,
                torch.get_rng_state() if torch is not None else None)

    def _set(self, state: Any) -> None:
        random, np, torch = self._mods
        if random:
            random.setstate(state[0])
        if np:
            np.random.set_state(state[1])
        if torch is not None:
            torch.set_rng_state(state[2])

    def build(self, make: Callable[[], Any]) -> Any:
        """``make()`` with the generators freshly seeded; the caller's state is kept."""
        random, np, torch = self._mods
        with _LOCK:
            outer = self._get()
            if random:
                random.seed(self._seed)
            if np:
                np.random.seed(self._seed)
            if torch is not None:
                torch.manual_seed(self._seed)
            try:
                return make()
            finally:
                self._state = self._get()
                self._set(outer)

    def call(self, f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``f(*args, **kwargs)`` with this cell's generators."""
        with _LOCK:
            if _LOADED[0] is not self:
                if _LOADED[0] is not None:
                    _LOADED[0]._state = _LOADED[0]._get()
                self._set(self._state)
                _LOADED[0] = self
            return f(*args, **kwargs)
