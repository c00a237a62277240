"""The notebook API: run experiments, read their results as DataFrames, make reports whose
tables are DataFrames and whose figures show inline, and list policies and trace sets.

Everything runs in this process through the engine (``banditbench._engine``, built into the
wheel). Errors are :class:`BanditbenchError` with the same messages the command line prints.
"""

from __future__ import annotations

import base64
import enum
import functools
import hashlib
import json
import os
import pathlib
import sys
import re
import shutil
import tempfile
import types
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type, Union

from .protocol import Policy

PathLike = Union[str, "os.PathLike[str]"]
PolicySpec = Union[Type[Policy], Tuple[Type[Policy], Mapping[str, Any]]]


def _engine():
    try:
        from . import _engine as engine
    except ImportError as e:  # the source tree without a built extension
        raise ImportError(
            "banditbench's engine is not built into this installation. Build its wheel in a "
            "clone of banditbench (Rust and maturin needed; the wheel then installs on Linux "
            "machines without them): pip install maturin==1.16.0 && maturin build --release "
            "--out dist && python scripts/wheel/build_data_wheel.py --out dist, then "
            "pip install dist/*.whl (see python/README.md, 'Install')"
        ) from e
    return engine


def _pd():
    import pandas as pd

    return pd


def _load_toml(path: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.9 and 3.10
        import tomli as tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)


class _Progress:
    """A run's progress: a tqdm bar (``tqdm.auto``: a widget in Jupyter, text in a terminal) when
    tqdm is installed, else a line per tenth of the cells on stderr."""

    def __init__(self, show: bool):
        self.show = show
        self.bar = None
        self.total = 0
        self.done = 0
        self.shown = 0

    def note(self, level: str, text: str) -> None:
        if level == "warning":
            warnings.warn(text, stacklevel=2)
        else:
            print(f"{level}: {text}", file=sys.stderr)

    def start(self, line: str, cells: int) -> None:
        self.total = cells
        if not self.show:
            return
        print(line, file=sys.stderr)
        try:
            import importlib.util

            # tqdm.auto draws a widget in Jupyter when ipywidgets is there, and otherwise warns
            # ("IProgress not found") before falling back to text: take the text bar directly.
            if importlib.util.find_spec("ipywidgets") is not None:
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=cells, unit="cell", desc="banditbench")

    def resumed(self, cells: int) -> None:
        """`cells` were finished by an earlier run: the bar counts to the rest."""
        self.total = max(self.total - cells, 0)
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def advance(self, cells: int) -> None:
        self.done += cells
        if self.bar is not None:
            self.bar.update(cells)
        elif self.show and self.total and self.done * 10 // self.total > self.shown:
            self.shown = self.done * 10 // self.total
            print(f"{self.done}/{self.total} cells", file=sys.stderr)

    def finish(self, summary: Optional[Dict[str, Any]]) -> None:
        if self.bar is not None:
            self.bar.close()
        if summary is not None and self.show:
            print(
                f"ran {summary['ran'] - summary.get('cache_hits', 0)} cells in "
                f"{summary['seconds']:.2f} s; "
                f"{summary['already_done']} were already finished"
                + (
                    f"; {summary['cache_hits']} came from the cell cache and "
                    f"{summary['cache_stored']} were stored in it"
                    if "cache_hits" in summary
                    else ""
                )
                + f"; results in {summary['out']}",
                file=sys.stderr,
            )


class _Unidentified(Exception):
    """Something a policy's code depends on that cannot be named by its content."""


# Modules whose objects are named, not hashed: the standard library and installed packages,
# identified by their name and version. Everything else (a notebook's ``__main__``, a user's
# own files) is hashed by what Python runs.
_LIBRARY_ROOTS = tuple(
    os.path.realpath(p)
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)}
)


def _is_library(module_name: Optional[str]) -> bool:
    if not module_name or module_name in ("__main__", "__mp_main__"):
        return False
    if module_name.split(".")[0] in ("builtins", "banditbench") or module_name in sys.builtin_module_names:
        return True
    mod = sys.modules.get(module_name)
    path = getattr(mod, "__file__", None)
    if not path:
        return False
    path = os.path.realpath(path)
    return "site-packages" in path or "dist-packages" in path or any(
        path.startswith(root + os.sep) for root in _LIBRARY_ROOTS
    )


def _library_version(module_name: str) -> str:
    top = sys.modules.get(module_name.split(".")[0])
    return str(getattr(top, "__version__", ""))


class _CodeHasher:
    """A digest of what Python runs for a policy class: the bytecode, constants and names of its
    methods (and of the functions and classes of user code they reach through globals,
    closures and defaults, recursively), the values of simple constants, and the name and version
    of library objects. Source text is not used: it is not available for a class defined in a
    notebook cell, and two classes with the same name but edited bodies must differ."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.seen: Dict[int, int] = {}

    def put(self, tag: str, text: Union[str, bytes] = b"") -> None:
        data = text.encode() if isinstance(text, str) else text
        self.h.update(f"{tag}:{len(data)}:".encode())
        self.h.update(data)

    def value(self, v: Any, depth: int = 0) -> None:
        if depth > 50:
            raise _Unidentified("nesting deeper than 50")
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            self.put(type(v).__name__, repr(v))
            return
        if isinstance(v, (tuple, list, frozenset, set)):
            items = list(v)
            if isinstance(v, (frozenset, set)):
                items.sort(key=repr)
            self.put(type(v).__name__, str(len(items)))
            for x in items:
                self.value(x, depth + 1)
            return
        if isinstance(v, dict):
            self.put("dict", str(len(v)))
            for k in sorted(v, key=repr):
                self.value(k, depth + 1)
                self.value(v[k], depth + 1)
            return
        key = id(v)
        if key in self.seen:  # a cycle or a shared object: name it by first visit
            self.put("ref", str(self.seen[key]))
            return
        self.seen[key] = len(self.seen)
        if isinstance(v, types.CodeType):
            self.code(v, depth)
        elif isinstance(v, (staticmethod, classmethod)):
            self.put(type(v).__name__)
            self.value(v.__func__, depth + 1)
        elif isinstance(v, property):
            self.put("property")
            for f in (v.fget, v.fset, v.fdel):
                self.value(f, depth + 1)
        elif isinstance(v, functools.partial):
            self.put("partial")
            self.value(v.func, depth + 1)
            self.value(v.args, depth + 1)
            self.value(v.keywords, depth + 1)
        elif isinstance(v, types.ModuleType):
            self.put("module", f"{v.__name__}=={_library_version(v.__name__)}")
        elif isinstance(v, (types.FunctionType, type)) and not _is_library(getattr(v, "__module__", None)):
            if isinstance(v, type):
                self.klass(v, depth)
            else:
                self.function(v, depth)
        elif isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type)) or callable(v) and hasattr(v, "__qualname__"):
            mod = getattr(v, "__module__", None) or ""
            self.put("library", f"{mod}.{getattr(v, '__qualname__', '')}=={_library_version(mod) if mod else ''}")
        elif hasattr(v, "tobytes") and hasattr(v, "dtype") and hasattr(v, "shape"):  # an array
            self.put("array", f"{v.dtype}{tuple(v.shape)}")
            self.put("bytes", v.tobytes())
        elif not _is_library(type(v).__module__) and hasattr(v, "__dict__"):  # a user object
            self.put("instance")
            self.value(type(v), depth + 1)
            self.value(dict(vars(v)), depth + 1)
        elif isinstance(v, enum.Enum):
            self.put("enum", f"{type(v).__module__}.{type(v).__qualname__}.{v.name}")
        else:
            text = repr(v)
            if " at 0x" in text or "object at" in text:
                raise _Unidentified(f"{type(v).__module__}.{type(v).__qualname__} object")
            self.put(f"{type(v).__module__}.{type(v).__qualname__}", text)

    def code(self, c: types.CodeType, depth: int) -> None:
        self.put("code", c.co_code)
        for name in ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_flags"):
            self.put(name, str(getattr(c, name, "")))
        self.put("names", "\0".join(c.co_names))
        self.put("varnames", "\0".join(c.co_varnames))
        self.put("freevars", "\0".join(c.co_freevars))
        self.put("cellvars", "\0".join(c.co_cellvars))
        self.put("consts", str(len(c.co_consts)))
        for k in c.co_consts:
            self.value(k, depth + 1)

    def function(self, f: types.FunctionType, depth: int) -> None:
        self.put("function", f.__qualname__)
        self.code(f.__code__, depth)
        self.value(f.__defaults__, depth + 1)
        self.value(f.__kwdefaults__, depth + 1)
        for cell in f.__closure__ or ():
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell
                self.put("empty-cell")
                continue
            self.value(content, depth + 1)
        # The globals its code names (a helper function, a constant of the notebook), in order.
        for name in _global_names(f.__code__):
            if name in f.__globals__:
                self.put("global", name)
                self.value(f.__globals__[name], depth + 1)

    def klass(self, cls: type, depth: int) -> None:
        self.put("class", cls.__qualname__)
        for base in cls.__bases__:
            self.value(base, depth + 1)
        for name in sorted(vars(cls)):
            if name in ("__dict__", "__weakref__", "__module__", "__doc__", "__qualname__"):
                continue
            self.put("attr", name)
            self.value(vars(cls)[name], depth + 1)


def _global_names(code: types.CodeType) -> List[str]:
    """Names a code object (and the code nested in it) loads: globals, attributes and methods
    among them; those not bound in the function's globals are skipped by the caller."""
    out: List[str] = []
    stack = [code]
    while stack:
        c = stack.pop()
        out.extend(n for n in c.co_names if n not in out)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _code_digest(cls: Any) -> str:
    """The policy class's identity by content (see :class:`_CodeHasher`). Where it holds an object
    that cannot be identified (an open file, a live model), the digest is unique to this call, so
    results made by it are never reused: a rerun into the same folder is refused as a changed
    experiment, and ``fresh=True`` runs it again."""
    hasher = _CodeHasher()
    hasher.put("python", f"{sys.implementation.cache_tag}")
    try:
        hasher.value(cls)
    except _Unidentified as e:
        warnings.warn(
            f"policy class {getattr(cls, '__qualname__', cls)!r} depends on {e}, whose content "
            "cannot be identified; its results are never reused (run with fresh=True, or another out)",
            stacklevel=3,
        )
        return "unidentified-" + os.urandom(8).hex()
    return hasher.h.hexdigest()[:16]


def _files_digest(paths: Sequence[str]) -> str:
    """A digest of the files under ``paths`` (files or folders): each file's path relative to
    its root and its bytes, in sorted order; caches (``__pycache__``, ``*.pyc``) left out."""
    h = hashlib.sha256()
    for root in sorted(os.path.abspath(p) for p in paths):
        files = []
        if os.path.isfile(root):
            files = [(os.path.basename(root), root)]
        else:
            for d, dirs, names in os.walk(root):
                dirs[:] = sorted(x for x in dirs if x != "__pycache__")
                files += [(os.path.relpath(os.path.join(d, n), root), os.path.join(d, n))
                          for n in names if not n.endswith(".pyc")]
        h.update(f"root:{len(files)}:".encode())
        for rel, full in sorted(files):
            with open(full, "rb") as f:
                data = f.read()
            h.update(f"{rel}:{len(data)}:".encode())
            h.update(data)
    return h.hexdigest()


def _policy_entries(policies: Union[Mapping[str, PolicySpec], Sequence[Type[Policy]]]) -> List[Dict[str, Any]]:
    if isinstance(policies, Mapping):
        items = list(policies.items())
    else:
        items = [(cls.__name__.lower().replace("_", "-"), cls) for cls in policies]
    entries = []
    for name, given in items:
        cls, params = (given if isinstance(given, tuple) else (given, {}))
        if not callable(cls):
            raise TypeError(f"policy {name!r}: {cls!r} is not a class; pass a banditbench.Policy subclass")
        _engine().register(name, cls)
        source = _code_digest(cls)
        files = getattr(cls, "identity_files", None)
        named = files(dict(params or {})) if callable(files) else []
        if named:
            # Plug-in folders the parameters name (an OptunaHub package): their content joins
            # the identity.
            source = hashlib.sha256((source + _files_digest(named)).encode()).hexdigest()[:16]
        entry: Dict[str, Any] = {"family": "python", "name": name, "source": source}
        if getattr(cls, "pool_space", False) is True:
            # The class ranks configurations: its cells get the pool's space (docs/protocol.md).
            entry["pool_space"] = True
        if params:
            entry["params"] = dict(params)
        entries.append(entry)
    return entries


def run(
    experiment: Union[PathLike, Mapping[str, Any]],
    *,
    policies: Optional[Union[Mapping[str, PolicySpec], Sequence[Type[Policy]]]] = None,
    out: Optional[PathLike] = None,
    threads: Optional[int] = None,
    fresh: bool = False,
    batch_size: Optional[int] = None,
    progress: bool = True,
    cache: Union[bool, PathLike, None] = None,
    cache_min_s: Optional[float] = None,
    client: Any = None,
    chunk_cells: Optional[int] = None,
) -> "Results":
    """Run an experiment and return its :class:`Results`.

    ``experiment`` is an experiment file's path, a bundled experiment's name (``"quickstart"``,
    found from any folder), or the same content as a dict. Relative paths in it are taken from
    where the experiment is: a file's folder, or the current folder for a dict; a ``traces``
    folder that is not there is looked up by its name among the bundled trace sets
    (``"traces/lcdb"`` works anywhere). Errors about a dict name the dict. ``policies`` adds Python policies run in-process:
    ``{"my-ucb": UCB1}``, ``{"my-ucb": (UCB1, {"c": [1.0, 2.0]})}`` (lists expand, as in an
    experiment file) or ``[UCB1]`` (named after the class). ``threads`` defaults to all cores,
    or 1 when Python policies run (they share the interpreter). Results go to ``out``, by default
    ``results/NAME`` (the experiment's name), or ``results/NAME+POLICY`` when ``policies`` adds
    some, so that the experiment without them keeps its folder. Rerunning skips finished cells;
    ``fresh=True`` runs every cell again.

    ``cache`` reuses finished cells from a cell cache, from any earlier experiment, and stores
    the cells this run replays: ``True`` for the default folder (``$BANDITBENCH_CACHE``, else
    ``~/.cache/banditbench``) or a folder. A cell's key is its content (data, world, policy
    identity with its code, task, budget, repetition, seed), so adding a policy to a grid replays
    only its cells, and the folder equals a fresh run's. Cells quicker than ``cache_min_s``
    (default 0.001 s) are replayed rather than stored.

    ``client`` (a ``dask.distributed.Client``) spreads the cells over a Dask cluster: a
    ``LocalCluster`` on one machine, or dask-jobqueue's ``SLURMCluster``. The cells go out in
    chunks of consecutive cells (``chunk_cells``; default: about 16 chunks per worker thread) that
    Dask's scheduler balances, so uneven cells (a D-TTTS cell costs about 300 random-search cells)
    finish together. This process holds the results folder, publishes each chunk as it comes
    back and merges at the end, with the same resume and the same bytes as a local run. The
    workers need this banditbench version and the experiment's files at the same paths (a shared
    file system on a cluster). A worker that dies mid-chunk has its chunk run again elsewhere;
    each chunk's cells are kept once. ``threads`` does not apply (the cluster's workers run the
    cells), nor does ``batch_size``, which raises.
    """
    engine = _engine()
    path: Optional[str] = None
    if isinstance(experiment, Mapping):
        spec = json.loads(json.dumps(experiment))
        base = os.getcwd()
    else:
        # A path, or a bundled experiment by name ("quickstart") from any folder.
        path = engine.experiment_file(os.fspath(experiment))
        spec = None
        base = os.path.dirname(os.path.abspath(path))
    tmp = None
    if policies or spec is not None:
        if spec is None:
            spec = _load_toml(path)
        if policies:
            spec.setdefault("policies", [])
            added = _policy_entries(policies)
            spec["policies"] = list(spec["policies"]) + added
            if threads is None:
                threads = 1
            if out is None:
                # Not results/NAME, which holds the experiment without them: results/NAME+POLICY.
                names = "+".join(re.sub(r"[^A-Za-z0-9._+-]", "_", e["name"]) for e in added)
                out = os.path.join("results", f"{spec.get('name', 'experiment')}+{names}")
        if isinstance(spec.get("traces"), str):
            spec["traces"] = os.path.join(base, spec["traces"])
        import tomli_w

        tmp = tempfile.TemporaryDirectory(prefix="banditbench-")
        path = os.path.join(tmp.name, f"{spec.get('name', 'experiment')}.toml")
        with open(path, "wb") as f:
            tomli_w.dump(spec, f)
    try:
        if client is not None:
            if batch_size is not None:
                raise ValueError("batch_size does not apply with a client: each chunk of "
                                 "chunk_cells cells is published as a part when it comes back")
            registered = _registered(policies) if policies else []
            folder, notes = _run_on_dask(
                engine, client, path, out, fresh, cache, cache_min_s, chunk_cells, progress,
                registered)
        else:
            folder, notes = engine.run(
                path,
                out=None if out is None else os.fspath(out),
                threads=threads,
                batch_size=batch_size,
                fresh=fresh,
                progress=_Progress(progress),
                cache=_cache_arg(cache),
                cache_min_s=cache_min_s,
            )
    except engine.BanditbenchError as e:
        if tmp is None:
            raise
        # Messages name the file the engine read, a temporary copy gone by now: name what the
        # user gave instead.
        given = (
            f"the experiment dict {spec.get('name', '')!r}"
            if isinstance(experiment, Mapping)
            else f"{os.fspath(experiment)} (with the policies given to run)"
        )
        raise engine.BanditbenchError(str(e).replace(path, given)) from None
    finally:
        if tmp is not None:
            tmp.cleanup()
    for level, text in notes:
        if level == "warning":
            warnings.warn(text, stacklevel=2)
        elif progress:
            print(f"{level}: {text}", file=sys.stderr)
    return Results(folder)


def _registered(policies: Union[Mapping[str, PolicySpec], Sequence[Type[Policy]]]) -> List[Any]:
    """The (name, class) pairs of in-process policies, for workers to register."""
    if isinstance(policies, Mapping):
        items = list(policies.items())
    else:
        items = [(cls.__name__.lower().replace("_", "-"), cls) for cls in policies]
    return [(name, given[0] if isinstance(given, tuple) else given) for name, given in items]


def _dask_chunk(path: str, text: bytes, indices: List[int], cache: Optional[str],
                cache_min_s: Optional[float], registered: List[Any]) -> bytes:
    """A Dask task: replay ``indices`` of the experiment in this worker process."""
    engine = _engine()
    for name, cls in registered:
        engine.register(name, cls)
    try:
        with open(path, "rb") as f:
            same = f.read() == text
    except OSError:
        same = False
    if not same:
        # Not on this machine (a temporary copy of a dict experiment on another node): the
        # engine reads the experiment from a file, so write the client's here.
        folder = os.path.join(tempfile.gettempdir(), "banditbench-dask", hashlib.sha256(text).hexdigest()[:16])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, os.path.basename(path))
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(text)
            os.replace(tmp, path)
    return engine.run_chunk(path, indices, cache=cache, cache_min_s=cache_min_s)


def _chunks(todo: List[int], threads: int, chunk_cells: Optional[int]) -> List[List[int]]:
    size = chunk_cells or max(1, -(-len(todo) // (16 * max(threads, 1))))
    return [todo[i:i + size] for i in range(0, len(todo), size)]


def _run_on_dask(engine: Any, client: Any, path: str, out: Optional[PathLike], fresh: bool,
                 cache: Union[bool, PathLike, None], cache_min_s: Optional[float],
                 chunk_cells: Optional[int], progress: bool, registered: List[Any]):
    """``run`` with ``client``: the engine's session holds the folder; Dask replays the chunks."""
    from distributed import as_completed

    if chunk_cells is not None and chunk_cells < 1:
        raise ValueError(f"chunk_cells is {chunk_cells}; give at least 1 cell per chunk")
    session = engine.RunSession(path, out=None if out is None else os.fspath(out), fresh=fresh,
                                cache=_cache_arg(cache), cache_min_s=cache_min_s,
                                progress=_Progress(progress))
    notes = session.notes()
    todo = session.todo()
    threads = sum(client.nthreads().values()) or 1
    with open(path, "rb") as f:
        text = f.read()
    cache_arg = _cache_arg(cache)
    # Chunks in cell order, submitted as pure tasks: Dask runs a lost worker's chunk again, and
    # each chunk's result is taken once, from the future that holds it.
    futures = [
        client.submit(_dask_chunk, path, text, chunk, cache_arg, cache_min_s, registered,
                      key=f"banditbench-{os.getpid()}-{id(session)}-{k}", pure=False)
        for k, chunk in enumerate(_chunks(todo, threads, chunk_cells))
    ]
    try:
        for fut in as_completed(futures):
            session.accept(fut.result())
            fut.release()
    except KeyboardInterrupt:
        client.cancel(futures)
        raise KeyboardInterrupt(session.stop("interrupted", True)) from None
    except engine.BanditbenchError as e:
        client.cancel(futures)
        raise engine.BanditbenchError(session.stop(str(e), False)) from None
    except Exception as e:
        client.cancel(futures)
        raise engine.BanditbenchError(session.stop(f"{type(e).__name__}: {e}", False)) from e
    summary = session.finish()
    return summary["out"], notes


def _cache_arg(cache: Union[bool, PathLike, None]) -> Optional[str]:
    """``run``'s ``cache`` as the engine takes it: a folder, "" for the default one, or None."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return ""
    return os.fspath(cache)


class Results:
    """A results folder: ``runs`` (one row per cell) and ``trajectories`` (one row per
    decision) as pandas DataFrames, the ``ranking``, and :meth:`report`."""

    def __init__(self, folder: PathLike):
        self.folder = os.fspath(folder)
        self._runs = None
        self._trajectories = None

    def __repr__(self) -> str:
        return f"Results({self.folder!r})"

    @property
    def runs(self):
        """One row per cell (pandas), JSON columns decoded; see the README's results format."""
        if self._runs is None:
            from .results import read_runs

            self._runs = read_runs(self.folder)
        return self._runs

    @property
    def trajectories(self):
        """One row per decision (pandas)."""
        if self._trajectories is None:
            from .results import read_trajectories

            self._trajectories = read_trajectories(self.folder)
        return self._trajectories

    def read_runs(self, backend: str = "pandas", decode_json: bool = True):
        """``runs`` as pandas or polars (``backend="polars"``)."""
        from .results import read_runs

        return read_runs(self.folder, backend=backend, decode_json=decode_json)

    def read_trajectories(self, backend: str = "pandas"):
        """``trajectories`` as pandas or polars (``backend="polars"``)."""
        from .results import read_trajectories

        return read_trajectories(self.folder, backend=backend)

    @property
    def ranking(self):
        """Mean rank (1 = best) and mean score per policy over the units, best first, as `run`
        prints it; ``.attrs["units"]`` says what the units are."""
        rows, what = _engine().ranking(self.folder)
        df = _pd().DataFrame(rows, columns=["policy", "mean_rank", "mean_score", "units"])
        df.index = range(1, len(df) + 1)
        df.attrs["units"] = what
        return df

    def report(self, out: Optional[PathLike] = None, **options: Any) -> "Report":
        """Write the statistics, tables and figures (``banditbench report``) and return them.

        ``options`` are the command's flags as keywords, ``_`` for ``-``: ``alpha=0.01``,
        ``pairs="against:ucb1"``, ``per_budget=True``, ``regret="compared"``,
        ``labels={"policy id": "label"}``, ...; an unknown one raises, naming it.
        """
        return report(self.folder, out=out, **options)

    def _repr_html_(self) -> str:
        r = self.ranking
        return (
            f"<p><b>banditbench results</b> <code>{self.folder}</code>: mean rank over "
            f"{r.attrs['units']}</p>" + r.to_html(float_format=lambda x: f"{x:.4g}")
        )


def _options_json(options: Mapping[str, Any]) -> str:
    """Keyword options as the engine reads them by name: paths as text, a mapping (labels) as
    an object; anything JSON cannot hold is refused here, naming the key."""
    def plain(key: str, value: Any) -> Any:
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if isinstance(value, Mapping):
            return {str(k): plain(key, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(key, v) for v in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if hasattr(value, "item"):  # a numpy scalar
            return value.item()
        raise TypeError(f"{key}={value!r}: give a number, text, a path, a list or a mapping")

    return json.dumps({k: plain(k, v) for k, v in options.items()})


def import_runs(
    tool: str,
    paths: Union[PathLike, Sequence[PathLike]],
    out: PathLike,
    *,
    fresh: bool = False,
    **options: Any,
) -> Union["Results", "pathlib.Path"]:
    """``banditbench import TOOL PATHS --out OUT``: another tool's run logs (``tool`` is
    ``"syne-tune"``, ``"optuna"``, ``"carps"``, ``"hposuite"`` or ``"deepcave"``) into a results
    folder, returned as :class:`Results`; or (``tool="blackbox"``, one folder) a Syne Tune
    blackbox into a pool, whose folder is returned as a path for experiments to name.
    Options as on the command line, ``_`` for ``-``: ``budget=60``, ``names="{policy}.{dataset}.{seed}"``,
    ``clock="attr:cost_s"``, ``task="phoneme/0"``, ``prefix="st:"``, ``one_minus=True``,
    ``metric="score"``, ``cost="cost_s"``.

    Rerunning is safe: when ``out`` exists, the import is made again beside it and compared
    file by file. The same inputs and options give the same folder, which is kept and returned
    (so "Run all" in a notebook works twice); anything else is refused unless ``fresh=True``,
    which replaces the folder with the new import."""
    engine = _engine()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = os.fspath(out)
    target = out
    tmp = None
    if os.path.exists(out):
        # Imported under the same folder name (the name is part of what an import writes).
        parent = os.path.dirname(os.path.abspath(out))
        tmp = tempfile.mkdtemp(prefix=".banditbench-import-", dir=parent)
        target = os.path.join(tmp, os.path.basename(os.path.abspath(out)))
    try:
        _, notes = engine.import_runs(tool, [os.fspath(p) for p in paths], target,
                                      _options_json(options))
        for note in notes:
            warnings.warn(note, stacklevel=2)
        if tmp is not None:
            if not _same_files(target, out):
                if not fresh:
                    raise engine.BanditbenchError(
                        f"{out}: already holds an import of other runs or other options; pass "
                        "fresh=True to replace it, or give another out"
                    )
                if not _is_import(out):
                    raise engine.BanditbenchError(
                        f"{out}: exists and is not a folder banditbench imported (no "
                        "experiment.lock.toml naming an import, no pool.toml); it is left as it is: "
                        "give another out"
                    )
                shutil.rmtree(out)
                os.replace(target, out)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if tool == "blackbox":
        return pathlib.Path(out)
    return Results(out)


def _files(folder: str) -> Dict[str, str]:
    """Relative path -> full path of the files under ``folder``, the run lock (a transient file
    naming the process) left out."""
    found = {}
    for dirpath, _, filenames in os.walk(folder):
        for fn in filenames:
            if fn == ".banditbench.lock":
                continue
            full = os.path.join(dirpath, fn)
            found[os.path.relpath(full, folder)] = full
    return found


def _same_files(a: str, b: str) -> bool:
    import filecmp

    fa, fb = _files(a), _files(b)
    return fa.keys() == fb.keys() and all(filecmp.cmp(fa[k], fb[k], shallow=False) for k in fa)


def _is_import(folder: str) -> bool:
    """A results folder an import wrote (its lock names the import), or a pool."""
    if os.path.isfile(os.path.join(folder, "pool.toml")):
        return True
    lock = os.path.join(folder, "experiment.lock.toml")
    if not os.path.isfile(lock):
        return False
    return "imported" in _load_toml(lock).get("resolved", {})


def report(
    results: Union[PathLike, "Results", Sequence[Union[PathLike, "Results"]], Any] = None,
    *,
    out: Optional[PathLike] = None,
    scores: Optional[Any] = None,
    **options: Any,
) -> "Report":
    """``banditbench report`` on a results folder, on several ranked together (a list: built-in
    runs, imports, Python policies' runs; ``out`` is then required), or on a table of scores
    (``scores``: a CSV path or a pandas DataFrame, with ``unit_col``, ``policy_col``,
    ``score_col`` options as on the command line). Returns the :class:`Report`."""
    engine = _engine()
    tmp = None
    folders = results if isinstance(results, (list, tuple)) else [results]
    folders = [f.folder if isinstance(f, Results) else f for f in folders if f is not None]
    if len(folders) > 1 and out is None:
        raise ValueError("a report on several results folders needs out=FOLDER")
    request: Dict[str, Any] = {"results": [os.fspath(f) for f in folders]}
    if scores is not None:
        if out is None:
            raise ValueError("a report on a scores table needs out=FOLDER")
        if hasattr(scores, "to_csv"):
            tmp = tempfile.TemporaryDirectory(prefix="banditbench-scores-")
            path = os.path.join(tmp.name, "scores.csv")
            scores.to_csv(path, index=False)
            scores = path
        request["scores"] = os.fspath(scores)
    if out is None:
        out = os.path.join(os.fspath(folders[0]), "report") if folders else None
    request["out"] = out
    for key in request:
        if key in options:
            raise TypeError(f"report() got {key} twice")
    try:
        out, _, _ = engine.report(_options_json({**request, **options}))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return Report(out)


class Report:
    """A report folder: ``tables`` (DataFrames of every CSV), ``tests`` (tests.json), ``text``
    (report.md) and ``figures`` (name -> PNG path). In Jupyter it shows the ranking and every
    figure inline."""

    def __init__(self, folder: PathLike):
        self.folder = os.fspath(folder)
        names = sorted(os.listdir(self.folder))
        self.figures: Dict[str, str] = {
            n[:-4]: os.path.join(self.folder, n) for n in names if n.endswith(".png")
        }
        self._tables: Optional[Dict[str, Any]] = None

    def __repr__(self) -> str:
        return f"Report({self.folder!r}: {len(self.figures)} figures)"

    @property
    def tables(self) -> Dict[str, Any]:
        """Every CSV of the report as a pandas DataFrame, by name (``ranks``, ``summary``,
        ``labels``, and each figure's data)."""
        if self._tables is None:
            pd = _pd()
            self._tables = {
                n[:-4]: pd.read_csv(os.path.join(self.folder, n))
                for n in sorted(os.listdir(self.folder))
                if n.endswith(".csv")
            }
        return self._tables

    @property
    def tests(self) -> Dict[str, Any]:
        """The statistical tests (tests.json)."""
        with open(os.path.join(self.folder, "tests.json")) as f:
            return json.load(f)

    @property
    def text(self) -> str:
        """The report in words (report.md)."""
        with open(os.path.join(self.folder, "report.md")) as f:
            return f.read()

    def figure(self, name: str):
        """One figure, shown inline in Jupyter (an ``IPython.display.Image``)."""
        if name not in self.figures:
            raise KeyError(f"no figure {name!r}; the report has: {', '.join(self.figures)}")
        from IPython.display import Image

        return Image(filename=self.figures[name])

    def _repr_html_(self) -> str:
        parts = [f"<p><b>banditbench report</b> <code>{self.folder}</code></p>"]
        summary = self.tables.get("summary")
        if summary is not None:
            parts.append(summary.to_html(index=False, float_format=lambda x: f"{x:.4g}"))
        for name, path in self.figures.items():
            with open(path, "rb") as f:
                data = base64.b64encode(f.read()).decode()
            parts.append(
                f"<figure><img src='data:image/png;base64,{data}' style='max-width:100%'/>"
                f"<figcaption>{name}</figcaption></figure>"
            )
        return "\n".join(parts)


def policies():
    """Every built-in policy as a DataFrame: name, summary, source (its paper), worlds, the
    worlds where it runs on several simulated workers (``workers``), and its parameters (a list
    of dicts: name, default, kind, doc)."""
    rows = []
    for name, summary, source, worlds, parallel, params in _engine().policies():
        rows.append({
            "name": name,
            "summary": summary,
            "source": source,
            "worlds": ", ".join(worlds),
            "workers": ", ".join(parallel),
            "params": [dict(zip(("name", "default", "kind", "doc"), p)) for p in params],
        })
    return _pd().DataFrame(rows)


def trace_sets(folder: PathLike = "traces"):
    """The trace sets and configuration pools under ``folder`` as a DataFrame: folder, kind,
    metric, size, description."""
    rows = _engine().trace_sets(os.fspath(folder))
    return _pd().DataFrame(rows, columns=["folder", "kind", "metric", "size", "description"])
