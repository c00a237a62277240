"""Write the files pandas makes of a scores table and of a trace set, as test fixtures.

A user's tables come out of pandas: `df.unstack().to_csv()` (a wide table whose first column is the
named index), `category` columns (dictionary-encoded strings in parquet) and small integer types
(`int8` runs). tests/report.rs and tests/inputs.rs read these files, written here by pandas and
pyarrow themselves (versions in scripts/record/requirements.txt), never imitated by hand.

    python scripts/reference/pandas_layouts.py     # writes tests/fixtures/pandas/

The numbers are the hand-written test values of tests/report.rs and tests/fixtures/tiny (not
recorded data).
"""
import pathlib
import shutil

import pandas as pd
import pyarrow

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "pandas"

# tests/report.rs, scores_tables_in_other_layouts_give_the_same_report: 5 units x 3 policies.
SCORES = [
    [0.70, 0.80, 0.75],
    [0.60, 0.65, 0.90],
    [0.55, 0.85, 0.80],
    [0.90, 0.95, 0.70],
    [0.40, 0.60, 0.50],
]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    long = pd.DataFrame(
        [
            {"task": f"u{u}", "policy": p, "score": s}
            for u, row in enumerate(SCORES)
            for p, s in zip(["alpha", "beta", "gamma"], row)
        ]
    )
    # The most common wide table: a Series indexed by (task, policy), unstacked.
    long.set_index(["task", "policy"])["score"].unstack().to_csv(OUT / "scores-unstack.csv")
    # A long table with category columns and an int8 column.
    cat = long.rename(columns={"task": "unit"}).astype({"unit": "category", "policy": "category"})
    cat["seed"] = pd.Series([0] * len(cat), dtype="int8")
    cat.to_parquet(OUT / "scores-category.parquet", index=False)
    # The tiny trace set with category strings and small integer types.
    ev = pd.read_csv(ROOT / "tests" / "fixtures" / "tiny" / "evaluations.csv")
    ev = ev.astype(
        {
            "dataset": "category",
            "learner": "category",
            "status": "category",
            "run": "int8",
            "seq": "int16",
        }
    )
    tiny = OUT / "tiny-category"
    tiny.mkdir(exist_ok=True)
    ev.to_parquet(tiny / "evaluations.parquet", index=False)
    shutil.copy(ROOT / "tests" / "fixtures" / "tiny" / "traceset.toml", tiny / "traceset.toml")
    (OUT / "VERSIONS").write_text(
        f"pandas {pd.__version__}\npyarrow {pyarrow.__version__}\n"
        "written by scripts/reference/pandas_layouts.py\n"
    )


if __name__ == "__main__":
    main()
