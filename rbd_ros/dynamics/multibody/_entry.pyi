# The per-call entry (_entry.c; see entry.py): what mypy checks its callers against.
from typing import Any

from numpy.typing import NDArray

class Handle:
    @property
    def status(self) -> int: ...

def register(name: str, address: int, /) -> None: ...  # "rnea", "aba" or "crba": a cfunc's
def handle(model: Any, mi: NDArray[Any], mf: NDArray[Any], maps: NDArray[Any], lin: NDArray[Any],
           W: NDArray[Any], M6: NDArray[Any], wv: NDArray[Any], nq: int, nv: int, /) -> Handle: ...
def rnea(handle: Handle, model: Any, q: Any, v: Any, a: Any, fext: NDArray[Any],
         friction: bool, /) -> Any: ...
def aba(handle: Handle, model: Any, q: Any, v: Any, tau: Any, fext: NDArray[Any],
        friction: bool, /) -> Any: ...
def crba(handle: Handle, model: Any, q: Any, /) -> Any: ...
