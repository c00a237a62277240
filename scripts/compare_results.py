#!/usr/bin/env python3
"""Compare two results folders by content: every cell of runs.parquet, every decision of
trajectories.parquet, and the lock file's resolved experiment.

    python3 scripts/compare_results.py BEFORE AFTER [--rename OLD=NEW ...] [--ignore COLUMN ...]

BEFORE and AFTER are results folders (each with runs.parquet) or folders of them (e.g. two copies
of results/): then every experiment found in both is compared, and one verdict per experiment is
printed. Rows are matched by `cell` (runs) and by (`cell`, `step`) (trajectories), so the order
in which parts were merged does not matter. Values must be equal exactly (floats bit for bit;
null and NaN each only equal themselves).

A refactor that changes the schema names what it changed: `--rename OLD=NEW` compares BEFORE's
column OLD with AFTER's column NEW. A column only AFTER has is listed as added (its values have
nothing to be compared with); a column only BEFORE has is a difference unless renamed.
`program` (the build that ran a cell) and the lock file's build keys always differ between builds
and are not compared.

Exit status: 0 when every compared experiment is the same, 1 otherwise, 2 on bad input.
Needs pandas and pyarrow (pip install -r scripts/record/requirements.txt).
"""

import argparse
import sys
import tomllib
from pathlib import Path

import pandas as pd

BUILD_COLUMNS = {"program"}
BUILD_LOCK_KEYS = {"program", "git_commit", "experiment_file", "trace_dir", "fingerprint",
                   "results_format"}


def folders(root: Path) -> dict[str, Path]:
    if (root / "runs.parquet").is_file():
        return {root.name: root}
    found = {p.parent.name: p.parent for p in sorted(root.glob("*/runs.parquet"))}
    if not found:
        sys.exit(f"{root}: no runs.parquet in it or in its subfolders; give a results folder "
                 "or a folder of them")
    return found


def same_series(a: pd.Series, b: pd.Series) -> bool:
    a = a.reset_index(drop=True)
    b = b.reset_index(drop=True)
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        af = pd.to_numeric(a, errors="coerce").to_numpy(dtype="float64", na_value=float("nan"))
        bf = pd.to_numeric(b, errors="coerce").to_numpy(dtype="float64", na_value=float("nan"))
        return af.tobytes() == bf.tobytes()
    return a.astype("string").fillna("\0null").equals(b.astype("string").fillna("\0null"))


def compare_frame(name, a, b, keys, rename, ignore, added: list[str]) -> list[str]:
    """Differences of frame `name`; columns only AFTER has are appended to `added`."""
    out = []
    # BEFORE's column OLD is AFTER's NEW: compared under the new name.
    a = a.rename(columns={old: new for old, new in rename.items() if old in a.columns})
    missing = [k for k in keys if k not in a.columns or k not in b.columns]
    if missing:
        return [f"{name}: key column(s) {missing} missing"]
    if len(a) != len(b):
        out.append(f"{name}: {len(a)} rows before, {len(b)} after")
        return out
    a = a.sort_values(keys, kind="stable").reset_index(drop=True)
    b = b.sort_values(keys, kind="stable").reset_index(drop=True)
    only_a = sorted(set(a.columns) - set(b.columns) - ignore)
    only_b = sorted(set(b.columns) - set(a.columns) - ignore)
    if only_a:
        out.append(f"{name}: columns only before (removed; name their new names with --rename): "
                   f"{', '.join(only_a)}")
    added.extend(f"{name}.{c}" for c in only_b)
    for c in a.columns:
        if c in ignore or c not in b.columns:
            continue
        if not same_series(a[c], b[c]):
            diff = (a[c].astype("string").fillna("null") != b[c].astype("string").fillna("null"))
            n = int(diff.sum())
            i = int(diff.idxmax()) if n else 0
            where = ", ".join(f"{k}={a.at[i, k]}" for k in keys)
            out.append(f"{name}: column {c} differs in {n} row(s), first at {where}: "
                       f"{a.at[i, c]!r} before, {b.at[i, c]!r} after")
    return out


def compare_lock(a: Path, b: Path) -> list[str]:
    la, lb = a / "experiment.lock.toml", b / "experiment.lock.toml"
    if not la.is_file() or not lb.is_file():
        return [] if la.is_file() == lb.is_file() else ["experiment.lock.toml on one side only"]
    ra = tomllib.loads(la.read_text()).get("resolved", {})
    rb = tomllib.loads(lb.read_text()).get("resolved", {})
    out = []
    for k in sorted(set(ra) | set(rb)):
        if k in BUILD_LOCK_KEYS:
            continue
        if ra.get(k) != rb.get(k):
            out.append(f"lock: resolved.{k} is {ra.get(k)!r} before, {rb.get(k)!r} after")
    return out


def compare(a: Path, b: Path, rename, ignore, added) -> list[str]:
    out = compare_lock(a, b)
    ra, rb = pd.read_parquet(a / "runs.parquet"), pd.read_parquet(b / "runs.parquet")
    out += compare_frame("runs", ra, rb, ["cell"], rename, ignore, added)
    ta, tb = a / "trajectories.parquet", b / "trajectories.parquet"
    if ta.is_file() and tb.is_file():
        out += compare_frame("trajectories", pd.read_parquet(ta), pd.read_parquet(tb),
                             ["cell", "step"], rename, ignore, added)
    elif ta.is_file() != tb.is_file():
        out.append("trajectories.parquet on one side only")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW")
    ap.add_argument("--ignore", action="append", default=[], metavar="COLUMN")
    args = ap.parse_args()
    rename = {}
    for r in args.rename:
        if "=" not in r:
            print(f"--rename {r!r}: expected OLD=NEW", file=sys.stderr)
            return 2
        old, new = r.split("=", 1)
        rename[old] = new
    ignore = BUILD_COLUMNS | set(args.ignore)
    fa, fb = folders(args.before), folders(args.after)
    if len(fa) == 1 and len(fb) == 1:
        pairs = [(next(iter(fa)), next(iter(fa.values())), next(iter(fb.values())))]
    else:
        pairs = [(n, fa[n], fb[n]) for n in sorted(fa) if n in fb]
        for n in sorted(set(fa) ^ set(fb)):
            print(f"{n}: only {'before' if n in fa else 'after'}; not compared")
    bad = 0
    for name, a, b in pairs:
        added = []
        diffs = compare(a, b, rename, ignore, added)
        if diffs:
            bad += 1
            print(f"{name}: DIFFERS")
            for d in diffs:
                print(f"  {d}")
        else:
            runs = pd.read_parquet(a / "runs.parquet", columns=["cell"])
            t = a / "trajectories.parquet"
            steps = len(pd.read_parquet(t, columns=["cell"])) if t.is_file() else 0
            extra = f"; columns added: {', '.join(added)}" if added else ""
            renamed = f"; renamed: {', '.join(f'{o}->{n}' for o, n in rename.items())}" \
                if rename else ""
            print(f"{name}: same ({len(runs)} cells, {steps} decisions){renamed}{extra}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
