"""Full hyper-parameter grids for configuration pools (pool format v1, see traces/README.md).

Each learner has four dimensions of five levels (625 configurations): a full grid, so every grid
neighbour of a configuration (one level up or down in an ordinal dimension, any other level of a
categorical one) is itself a recorded configuration, and grid search is exact.

A learner is trained for `UNITS` fidelity units; one unit is `unit_size` boosting iterations, trees
or epochs. The whole curve comes from one fit (see record_grid.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

UNITS = 27  # Hyperband with eta = 3 gets the rungs 1, 3, 9, 27


@dataclass(frozen=True)
class GridDim:
    name: str
    kind: str  # ordinal | categorical
    values: tuple


@dataclass(frozen=True)
class GridLearner:
    name: str
    estimator: str
    unit: str  # what one fidelity unit is
    unit_size: int
    scaled: bool  # needs feature scaling
    curve: str  # staged | forest | epochs
    dims: tuple[GridDim, ...]

    def configs(self):
        """All configurations in mixed-radix order (the last dimension varies fastest)."""
        for levels in itertools.product(*(range(len(d.values)) for d in self.dims)):
            yield levels, {d.name: d.values[k] for d, k in zip(self.dims, levels)}


def O(name, *values):  # noqa: E743
    return GridDim(name, "ordinal", tuple(values))


def C(name, *values):
    return GridDim(name, "categorical", tuple(values))


LEARNERS: dict[str, GridLearner] = {
    g.name: g
    for g in [
        GridLearner(
            "hist-gradient-boosting", "HistGradientBoostingClassifier(early_stopping=False, max_iter=216)",
            "8 boosting iterations", 8, False, "staged",
            (O("learning_rate", 0.01, 0.03, 0.1, 0.3, 1.0),
             O("max_leaf_nodes", 4, 8, 16, 32, 64),
             O("min_samples_leaf", 1, 5, 20, 50, 100),
             O("l2_regularization", 0.0, 0.01, 0.1, 1.0, 10.0))),
        GridLearner(
            "random-forest", "RandomForestClassifier(n_estimators=216)",
            "8 trees", 8, False, "forest",
            (O("max_features", 0.1, 0.25, 0.5, 0.75, 1.0),
             O("max_depth", 2, 4, 8, 16, 32),
             O("min_samples_leaf", 1, 2, 4, 8, 16),
             O("max_samples", 0.2, 0.4, 0.6, 0.8, 1.0))),
        GridLearner(
            "mlp", "MLPClassifier(solver='adam', one partial_fit per epoch)",
            "3 epochs", 3, True, "epochs",
            (O("hidden_layer_size", 16, 32, 64, 128, 256),
             O("alpha", 1e-5, 1e-4, 1e-3, 1e-2, 1e-1),
             O("learning_rate_init", 1e-4, 3e-4, 1e-3, 3e-3, 1e-2),
             O("batch_size", 16, 32, 64, 128, 256))),
        GridLearner(
            "sgd", "SGDClassifier(penalty='elasticnet', learning_rate='invscaling', one partial_fit per epoch)",
            "3 epochs", 3, True, "epochs",
            (C("loss", "hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron"),
             O("alpha", 1e-6, 1e-5, 1e-4, 1e-3, 1e-2),
             O("l1_ratio", 0.0, 0.15, 0.5, 0.85, 1.0),
             O("eta0", 1e-4, 1e-3, 1e-2, 1e-1, 1.0))),
    ]
}


def build(name: str, config: dict, seed: int):
    """The estimator for one configuration, before any training."""
    if name == "hist-gradient-boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=UNITS * 8, early_stopping=False, random_state=seed, **config)
    if name == "random-forest":
        from sklearn.ensemble import RandomForestClassifier

        cfg = dict(config)
        if cfg["max_samples"] is not None and cfg["max_samples"] >= 1.0:
            cfg["max_samples"] = None
        return RandomForestClassifier(n_estimators=UNITS * 8, random_state=seed, n_jobs=1, **cfg)
    if name == "mlp":
        from sklearn.neural_network import MLPClassifier

        cfg = dict(config)
        width = cfg.pop("hidden_layer_size")
        return MLPClassifier(hidden_layer_sizes=(width,), solver="adam", random_state=seed, **cfg)
    if name == "sgd":
        from sklearn.linear_model import SGDClassifier

        return SGDClassifier(penalty="elasticnet", learning_rate="invscaling", random_state=seed, **config)
    raise KeyError(name)


def default_config(name: str) -> dict:
    """scikit-learn's defaults for the dimensions of learner `name`'s grid, read from a fresh
    estimator (`get_params()`); the settings the grid fixes (max_iter, n_estimators, solver,
    penalty, learning-rate schedule) stay as the grid has them. Defaults may be off the grid
    (max_leaf_nodes=31, max_features="sqrt", max_depth=None, hidden width 100, batch "auto")."""
    g = LEARNERS[name]
    est = build(name, {d.name: d.values[0] for d in g.dims}, 0)
    p = type(est)().get_params()
    if name == "mlp":
        (p["hidden_layer_size"],) = p["hidden_layer_sizes"]
    return {d.name: p[d.name] for d in g.dims}
