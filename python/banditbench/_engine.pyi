"""Type stubs of the extension module built from src/python.rs."""

from typing import Any, List, Optional, Sequence, Tuple

__version__: str

class BanditbenchError(Exception): ...

class Observation:
    arm: int
    reward: Optional[float]
    arm_clock: float
    exhausted: bool
    @property
    def revealed(self) -> List[List[Optional[float]]]: ...

def cli(argv: Sequence[str]) -> int: ...
def run(
    path: str,
    out: Optional[str] = ...,
    threads: Optional[int] = ...,
    batch_size: Optional[int] = ...,
    fresh: bool = ...,
    progress: Optional[Any] = ...,
) -> Tuple[str, List[Tuple[str, str]]]: ...
def register(name: str, factory: Any) -> None: ...
def ranking(folder: str) -> Tuple[List[Tuple[str, float, float, int]], str]: ...
def policies() -> List[Tuple[str, str, str, List[str], List[str], List[Tuple[str, str, str, str]]]]: ...
def trace_sets(folder: str) -> List[List[str]]: ...
def experiment_file(name: str) -> str: ...
