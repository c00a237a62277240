"""Learners and their hyper-parameter spaces (every range documented in traces/README.md).

A space is a list of dimensions. Random search samples each dimension independently; differential
evolution works in the unit cube [0, 1]^d and `decode` maps a point to a configuration, so both
tuners see exactly the same space.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Dim:
    name: str
    kind: str  # float | int | cat
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    choices: tuple = ()

    def decode(self, u: float):
        u = min(max(u, 0.0), 1.0)
        if self.kind == "cat":
            return self.choices[min(int(u * len(self.choices)), len(self.choices) - 1)]
        if self.log:
            v = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            v = self.low + u * (self.high - self.low)
        if self.kind == "int":
            return int(min(max(round(v), self.low), self.high))
        return float(v)


def F(name, low, high, log=False):
    return Dim(name, "float", low, high, log)


def I(name, low, high, log=False):  # noqa: E743
    return Dim(name, "int", low, high, log)


def C(name, *choices):
    return Dim(name, "cat", choices=tuple(choices))


TREE = [
    C("criterion", "gini", "entropy"),
    I("max_depth", 1, 30),
    I("min_samples_split", 2, 20),
    I("min_samples_leaf", 1, 20),
    F("max_features", 0.1, 1.0),
]

# name -> (space, needs feature scaling, one-line description)
LEARNERS: dict[str, tuple[list[Dim], bool, str]] = {
    "knn": ([I("n_neighbors", 1, 50, log=True), C("weights", "uniform", "distance"), C("p", 1, 2)], True,
            "KNeighborsClassifier"),
    "linear-svm": ([F("C", 1e-3, 1e3, log=True), F("tol", 1e-5, 1e-1, log=True), C("loss", "hinge", "squared_hinge")], True,
                   "LinearSVC (l2 penalty, max_iter 2000)"),
    "kernel-svm": ([F("C", 1e-2, 1e3, log=True), F("gamma", 1e-4, 10.0, log=True), C("kernel", "rbf", "poly", "sigmoid")], True,
                   "SVC (degree 3 for poly, max_iter 200000)"),
    "adaboost": ([I("n_estimators", 10, 200, log=True), F("learning_rate", 0.01, 2.0, log=True), I("max_depth", 1, 5)], False,
                 "AdaBoostClassifier over DecisionTreeClassifier(max_depth)"),
    "random-forest": ([I("n_estimators", 10, 200, log=True), F("max_features", 0.05, 1.0), I("min_samples_split", 2, 20),
                       I("min_samples_leaf", 1, 20), C("criterion", "gini", "entropy"), C("bootstrap", True, False)], False,
                      "RandomForestClassifier (n_jobs 1)"),
    "mlp": ([I("n_layers", 1, 2), I("width", 8, 128, log=True), F("alpha", 1e-6, 1e-1, log=True),
             F("learning_rate_init", 1e-4, 1e-1, log=True), C("activation", "relu", "tanh"), I("max_iter", 20, 200, log=True)], True,
            "MLPClassifier (adam, hidden_layer_sizes = (width,) * n_layers)"),
    "decision-tree": (TREE, False, "DecisionTreeClassifier"),
    "qda": ([F("reg_param", 0.0, 1.0)], False, "QuadraticDiscriminantAnalysis"),
    "gaussian-nb": ([F("var_smoothing", 1e-12, 1e-1, log=True)], False, "GaussianNB"),
    "bernoulli-nb": ([F("alpha", 1e-3, 10.0, log=True), F("binarize", 0.0, 1.0), C("fit_prior", True, False)], True,
                     "BernoulliNB (binarize threshold on standardised features)"),
    "extra-tree": (TREE, False, "ExtraTreeClassifier (a single randomised tree)"),
    "passive-aggressive": ([F("C", 1e-3, 10.0, log=True), C("loss", "hinge", "squared_hinge"), I("max_iter", 10, 1000, log=True),
                            F("tol", 1e-5, 1e-1, log=True)], True, "PassiveAggressiveClassifier"),
    "sgd": ([C("loss", "hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron"), C("penalty", "l2", "l1", "elasticnet"),
             F("alpha", 1e-6, 1e-1, log=True), F("l1_ratio", 0.0, 1.0), I("max_iter", 5, 1000, log=True),
             C("learning_rate", "optimal", "invscaling", "constant", "adaptive"), F("eta0", 1e-4, 1.0, log=True)], True,
            "SGDClassifier"),
}


def decode(learner: str, u) -> dict:
    space = LEARNERS[learner][0]
    return {d.name: d.decode(float(x)) for d, x in zip(space, u)}


def build(learner: str, config: dict, seed: int):
    """The estimator for one configuration (imports are local so the worker pays for them once)."""
    c = dict(config)
    if learner == "knn":
        from sklearn.neighbors import KNeighborsClassifier
        return KNeighborsClassifier(n_neighbors=c["n_neighbors"], weights=c["weights"], p=c["p"])
    if learner == "linear-svm":
        from sklearn.svm import LinearSVC
        return LinearSVC(C=c["C"], tol=c["tol"], loss=c["loss"], dual=True if c["loss"] == "hinge" else "auto",
                         max_iter=2000, random_state=seed)
    if learner == "kernel-svm":
        from sklearn.svm import SVC
        return SVC(C=c["C"], gamma=c["gamma"], kernel=c["kernel"], max_iter=200000, random_state=seed)
    if learner == "adaboost":
        from sklearn.ensemble import AdaBoostClassifier
        from sklearn.tree import DecisionTreeClassifier
        return AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=c["max_depth"], random_state=seed),
                                  n_estimators=c["n_estimators"], learning_rate=c["learning_rate"], random_state=seed)
    if learner == "random-forest":
        from sklearn.ensemble import RandomForestClassifier
        return RandomForestClassifier(n_estimators=c["n_estimators"], max_features=c["max_features"],
                                      min_samples_split=c["min_samples_split"], min_samples_leaf=c["min_samples_leaf"],
                                      criterion=c["criterion"], bootstrap=c["bootstrap"], n_jobs=1, random_state=seed)
    if learner == "mlp":
        from sklearn.neural_network import MLPClassifier
        return MLPClassifier(hidden_layer_sizes=(c["width"],) * c["n_layers"], alpha=c["alpha"],
                             learning_rate_init=c["learning_rate_init"], activation=c["activation"],
                             max_iter=c["max_iter"], random_state=seed)
    if learner in ("decision-tree", "extra-tree"):
        from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier
        cls = DecisionTreeClassifier if learner == "decision-tree" else ExtraTreeClassifier
        return cls(criterion=c["criterion"], max_depth=c["max_depth"], min_samples_split=c["min_samples_split"],
                   min_samples_leaf=c["min_samples_leaf"], max_features=c["max_features"], random_state=seed)
    if learner == "qda":
        from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
        return QuadraticDiscriminantAnalysis(reg_param=c["reg_param"])
    if learner == "gaussian-nb":
        from sklearn.naive_bayes import GaussianNB
        return GaussianNB(var_smoothing=c["var_smoothing"])
    if learner == "bernoulli-nb":
        from sklearn.naive_bayes import BernoulliNB
        return BernoulliNB(alpha=c["alpha"], binarize=c["binarize"], fit_prior=c["fit_prior"])
    if learner == "passive-aggressive":
        from sklearn.linear_model import PassiveAggressiveClassifier
        return PassiveAggressiveClassifier(C=c["C"], loss=c["loss"], max_iter=c["max_iter"], tol=c["tol"], random_state=seed)
    if learner == "sgd":
        from sklearn.linear_model import SGDClassifier
        return SGDClassifier(loss=c["loss"], penalty=c["penalty"], alpha=c["alpha"], l1_ratio=c["l1_ratio"],
                             max_iter=c["max_iter"], learning_rate=c["learning_rate"], eta0=c["eta0"], random_state=seed)
    raise KeyError(f"unknown learner '{learner}'; known: {', '.join(LEARNERS)}")


def default_config(learner: str) -> dict:
    """scikit-learn's own defaults for the dimensions of `learner`'s space, read from the installed
    estimator (`get_params()`), so Ex-Def evaluates what a user gets without tuning. Two dimensions
    are the recorder's own: AdaBoost's `max_depth` (scikit-learn's default base estimator is a
    stump, depth 1) and the MLP's `n_layers`/`width` (`hidden_layer_sizes=(100,)`). A default may lie
    outside the tuned range or be a word (`max_features="sqrt"`, `gamma="scale"`, `max_depth=None`);
    it is recorded as it is."""
    space = LEARNERS[learner][0]
    names = [d.name for d in space]
    if learner == "mlp":
        from sklearn.neural_network import MLPClassifier

        p = MLPClassifier().get_params()
        (width,) = p["hidden_layer_sizes"]
        p.update(n_layers=1, width=width)
    elif learner == "adaboost":
        from sklearn.ensemble import AdaBoostClassifier

        p = AdaBoostClassifier().get_params()
        p["max_depth"] = 1
    else:
        # build() with any in-space configuration gives the estimator class; a fresh instance of
        # that class holds the defaults.
        est = build(learner, {d.name: d.decode(0.5) for d in space}, 0)
        p = type(est)().get_params()
    return {n: p[n] for n in names}
