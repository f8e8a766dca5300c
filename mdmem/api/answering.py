"""The ``answers`` decorator of the Vault facade's methods: what went wrong after the work was done
travels in the result's ``warnings``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

from ..results.base import with_warnings

if TYPE_CHECKING:
    from ..index.store import IndexStore


class Answering(Protocol):
    """What ``answers`` needs of the facade: its store and the count of its calls under way."""

    store: IndexStore
    answering: int


S = TypeVar("S", bound=Answering)
P = ParamSpec("P")
R = TypeVar("R")


def answers(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """A ``Vault`` method whose result is an answer: what went wrong after the work was done during the
    call (a commit git refused, vectors not updated, a read from an index that could not be refreshed)
    travels in the result's ``warnings``. Only the outermost call collects: one method may call another."""

    @functools.wraps(method)
    def call(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.answering:
            return method(self, *args, **kwargs)
        store = self.store
        store.warnings.clear()
        self.answering += 1
        try:
            result = method(self, *args, **kwargs)
        finally:
            self.answering -= 1
        return with_warnings(result, store.take_warnings())

    return call
