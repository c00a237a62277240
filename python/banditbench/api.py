"""The notebook API: run experiments, read their results as DataFrames, make reports whose
tables are DataFrames and whose figures show inline, and list policies and trace sets.

Everything runs in this process through the engine (``banditbench._engine``, built into the
wheel). Errors are :class:`BanditbenchError` with the same messages the command line prints.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import os
import pathlib
import sys
import tempfile
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
            "banditbench's engine is not built into this installation: install the wheel "
            "(pip install banditbench-engine, or pip install . in a clone)"
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
            from tqdm.auto import tqdm
        except ImportError:
            return
        self.bar = tqdm(total=cells, unit="cell", desc="banditbench")

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
                f"ran {summary['ran']} cells in {summary['seconds']:.2f} s; "
                f"{summary['already_done']} were already finished; results in {summary['out']}",
                file=sys.stderr,
            )


def _source_digest(cls: Any) -> str:
    try:
        text = inspect.getsource(cls)
    except (OSError, TypeError):
        text = f"{getattr(cls, '__module__', '')}.{getattr(cls, '__qualname__', repr(cls))}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
        entry: Dict[str, Any] = {"family": "python", "name": name, "source": _source_digest(cls)}
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
) -> "Results":
    """Run an experiment and return its :class:`Results`.

    ``experiment`` is an experiment file's path or the same content as a dict (its ``traces``
    relative to the current directory). ``policies`` adds Python policies run in-process:
    ``{"my-ucb": UCB1}``, ``{"my-ucb": (UCB1, {"c": [1.0, 2.0]})}`` (lists expand, as in an
    experiment file) or ``[UCB1]`` (named after the class). ``threads`` defaults to all cores,
    or 1 when Python policies run (they share the interpreter). Rerunning skips finished cells;
    ``fresh=True`` runs every cell again.
    """
    engine = _engine()
    path: Optional[str] = None
    if isinstance(experiment, Mapping):
        spec = json.loads(json.dumps(experiment))
        base = os.getcwd()
    else:
        path = os.fspath(experiment)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such experiment file")
        spec = None
        base = os.path.dirname(os.path.abspath(path))
    tmp = None
    if policies or spec is not None:
        if spec is None:
            spec = _load_toml(path)
        if policies:
            spec.setdefault("policies", [])
            spec["policies"] = list(spec["policies"]) + _policy_entries(policies)
            if threads is None:
                threads = 1
        if isinstance(spec.get("traces"), str):
            spec["traces"] = os.path.join(base, spec["traces"])
        import tomli_w

        tmp = tempfile.TemporaryDirectory(prefix="banditbench-")
        path = os.path.join(tmp.name, f"{spec.get('name', 'experiment')}.toml")
        with open(path, "wb") as f:
            tomli_w.dump(spec, f)
    try:
        folder, notes = engine.run(
            path,
            out=None if out is None else os.fspath(out),
            threads=threads,
            batch_size=batch_size,
            fresh=fresh,
            progress=_Progress(progress),
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
    for level, text in notes:
        if level == "warning":
            warnings.warn(text, stacklevel=2)
        elif progress:
            print(f"{level}: {text}", file=sys.stderr)
    return Results(folder)


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

        ``options`` are the command's flags with ``_`` for ``-``: ``alpha=0.01``,
        ``pairs="against:ucb1"``, ``per_budget=True``, ``regret="compared"``, ...
        """
        return report(self.folder, out=out, **options)

    def _repr_html_(self) -> str:
        r = self.ranking
        return (
            f"<p><b>banditbench results</b> <code>{self.folder}</code>: mean rank over "
            f"{r.attrs['units']}</p>" + r.to_html(float_format=lambda x: f"{x:.4g}")
        )


def _flags(options: Mapping[str, Any]) -> List[str]:
    args: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def import_runs(
    tool: str,
    paths: Union[PathLike, Sequence[PathLike]],
    out: PathLike,
    **options: Any,
) -> Union["Results", "pathlib.Path"]:
    """``banditbench import TOOL PATHS --out OUT``: another tool's run logs (``tool`` is
    ``"syne-tune"``, ``"optuna"``, ``"carps"``, ``"hposuite"`` or ``"deepcave"``) into a results
    folder, returned as :class:`Results`; or (``tool="blackbox"``, one folder) a Syne Tune
    blackbox into a pool, whose folder is returned as a path for experiments to name.
    Options as on the command line, ``_`` for ``-``: ``budget=60``, ``names="{policy}.{dataset}.{seed}"``,
    ``clock="attr:cost_s"``, ``task="phoneme/0"``, ``prefix="st:"``, ``one_minus=True``,
    ``metric="score"``, ``cost="cost_s"``."""
    engine = _engine()
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    args = ["import", tool] + [os.fspath(p) for p in paths] + ["--out", os.fspath(out)] + _flags(options)
    code = engine.cli(args)
    if code != 0:
        raise engine.BanditbenchError(
            f"banditbench {' '.join(args)} failed (exit {code}); its message is above"
        )
    if tool == "blackbox":
        return pathlib.Path(out)
    return Results(out)


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
    args = ["report"]
    folders = results if isinstance(results, (list, tuple)) else [results]
    folders = [f.folder if isinstance(f, Results) else f for f in folders if f is not None]
    if len(folders) > 1 and out is None:
        raise ValueError("a report on several results folders needs out=FOLDER")
    args += [os.fspath(f) for f in folders]
    results = folders[0] if folders else None
    if scores is not None:
        if hasattr(scores, "to_csv"):
            tmp = tempfile.TemporaryDirectory(prefix="banditbench-scores-")
            path = os.path.join(tmp.name, "scores.csv")
            scores.to_csv(path, index=False)
            scores = path
        args += ["--scores", os.fspath(scores)]
        if out is None:
            raise ValueError("a report on a scores table needs out=FOLDER")
    if out is None:
        out = os.path.join(os.fspath(results), "report")
    args += ["--out", os.fspath(out)] + _flags(options)
    try:
        code = engine.cli(args)
    finally:
        if tmp is not None:
            tmp.cleanup()
    if code != 0:
        raise engine.BanditbenchError(
            f"banditbench {' '.join(args)} failed (exit {code}); its message is above"
        )
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
    """Every built-in policy as a DataFrame: name, summary, source (its paper), worlds, and its
    parameters (a list of dicts: name, default, kind, doc)."""
    rows = []
    for name, summary, source, worlds, params in _engine().policies():
        rows.append({
            "name": name,
            "summary": summary,
            "source": source,
            "worlds": ", ".join(worlds),
            "params": [dict(zip(("name", "default", "kind", "doc"), p)) for p in params],
        })
    return _pd().DataFrame(rows)


def trace_sets(folder: PathLike = "traces"):
    """The trace sets and configuration pools under ``folder`` as a DataFrame: folder, kind,
    metric, size, description."""
    rows = _engine().trace_sets(os.fspath(folder))
    return _pd().DataFrame(rows, columns=["folder", "kind", "metric", "size", "description"])
