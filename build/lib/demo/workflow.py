"""Tab 2: fit candidates on training data, choose model and threshold on validation, test once.

Beside the honest result the module computes the *optimistic* one: the same
choices made on the test set itself, then evaluated on that same test set.
Every metric goes through :mod:`autograder.reference`.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from autograder.reference import ThresholdChoice, binary_metrics, choose_threshold, expected_cost, roc_auc

from .data import DemoInputError, WorkflowData

__all__ = ["RULES", "CANDIDATES", "Rule", "CandidateResult", "WorkflowResult", "fit_candidates", "run_workflow", "criterion_on"]

#: Threshold rules (key -> Chinese label); they match ``choose_threshold(rule=...)``.
RULES = {"f1": "F1 最大", "cost": "期望代价最小", "fpr_cap": "FPR 上限下 TPR 最大"}

#: Candidate models: (name shown in the page, constructor keyword arguments).
CANDIDATES: list[tuple[str, str, dict]] = [
    ("逻辑回归 C=0.01", "logreg", {"C": 0.01}),
    ("逻辑回归 C=0.1", "logreg", {"C": 0.1}),
    ("逻辑回归 C=1", "logreg", {"C": 1.0}),
    ("逻辑回归 C=100", "logreg", {"C": 100.0}),
    ("MLP 8 个隐藏单元", "mlp", {"hidden_layer_sizes": (8,), "alpha": 1e-3}),
    ("MLP 64 个隐藏单元", "mlp", {"hidden_layer_sizes": (64,), "alpha": 1e-4}),
]


class Rule(NamedTuple):
    """A threshold rule with its parameters."""

    name: str  # "f1" | "cost" | "fpr_cap"
    c_fp: float = 1.0
    c_fn: float = 1.0
    max_fpr: float = 0.1

    @property
    def maximise(self) -> bool:
        """True when a larger criterion value is better."""
        return self.name != "cost"


class CandidateResult(NamedTuple):
    """One fitted candidate: its threshold and criterion chosen on validation and on test."""

    name: str
    val_auc: float
    val_choice: ThresholdChoice
    test_choice: ThresholdChoice  # the forbidden choice made on the test set


class WorkflowResult(NamedTuple):
    """The honest and the optimistic outcome of one run."""

    rule: Rule
    candidates: list[CandidateResult]
    chosen: int  # index chosen on validation
    chosen_on_test: int  # index chosen on test (optimistic)
    threshold: float  # threshold chosen on validation
    test_metrics: object  # BinaryMetrics on test at the honest choice
    test_value: float  # criterion on test at the honest choice
    test_auc: float
    optimistic_threshold: float
    optimistic_metrics: object
    optimistic_value: float
    optimistic_auc: float
    sizes: tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # (n, n_pos) of train / val / test


def _make_model(kind: str, params: dict, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if kind == "logreg":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, **params))
    return make_pipeline(StandardScaler(), MLPClassifier(max_iter=600, random_state=seed, **params))


def _check_split(y: np.ndarray, name: str) -> tuple[int, int]:
    n_pos = int(np.count_nonzero(y == 1))
    if n_pos == 0 or n_pos == y.size:
        missing = "正类" if n_pos == 0 else "负类"
        raise DemoInputError(f"{name}（{y.size} 个样本）中没有{missing}，无法拟合或评价；请增大样本量 n 或让正类比例 π 离 0 和 1 远一些。")
    return y.size, n_pos


def fit_candidates(data: WorkflowData, seed: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Fit every candidate on the training part; return (name, validation probabilities, test probabilities)."""
    from sklearn.exceptions import ConvergenceWarning

    out = []
    for name, kind, params in CANDIDATES:
        model = _make_model(kind, params, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(data.X_train, data.y_train)
        out.append((name, model.predict_proba(data.X_val)[:, 1], model.predict_proba(data.X_test)[:, 1]))
    return out


def criterion_on(y: np.ndarray, score: np.ndarray, threshold: float, rule: Rule) -> float:
    """Value of the rule's criterion for a fixed threshold on a data set (its own prevalence).

    ``"f1"`` gives F1 (NaN if undefined), ``"cost"`` the expected cost per sample
    at the set's share of positives, ``"fpr_cap"`` the TPR (the cap is checked separately).
    """
    m = binary_metrics(y, score, threshold)
    if rule.name == "f1":
        return m.f1
    if rule.name == "cost":
        prior = float(np.mean(y == 1))
        return float(expected_cost(m.recall, m.fpr, prior=prior, c_fp=rule.c_fp, c_fn=rule.c_fn))
    return m.recall


def _choose(y: np.ndarray, score: np.ndarray, rule: Rule) -> ThresholdChoice:
    return choose_threshold(y, score, rule=rule.name, c_fp=rule.c_fp, c_fn=rule.c_fn, max_fpr=rule.max_fpr)


def _best(values: list[float], maximise: bool) -> int:
    # First best wins: candidates are listed from simplest to most flexible.
    arr = np.asarray(values, dtype=float)
    return int(np.argmax(arr) if maximise else np.argmin(arr))


def _threshold_value(threshold: float) -> float:
    # choose_threshold may return +inf ("predict no positive"); binary_metrics needs a finite threshold.
    return 1.0 + 1e-9 if math.isinf(threshold) else threshold


def run_workflow(data: WorkflowData, rule: Rule, seed: int, fitted: list[tuple[str, np.ndarray, np.ndarray]] | None = None) -> WorkflowResult:
    """Choose model and threshold on validation, evaluate once on test; also the optimistic variant.

    Raises
    ------
    DemoInputError
        If a part of the split lacks a class.
    """
    sizes = (
        _check_split(data.y_train, "训练集"),
        _check_split(data.y_val, "验证集"),
        _check_split(data.y_test, "测试集"),
    )
    if fitted is None:
        fitted = fit_candidates(data, seed)
    results = []
    for name, p_val, p_test in fitted:
        results.append(CandidateResult(name, roc_auc(data.y_val, p_val), _choose(data.y_val, p_val, rule), _choose(data.y_test, p_test, rule)))
    chosen = _best([r.val_choice.value for r in results], rule.maximise)
    chosen_on_test = _best([r.test_choice.value for r in results], rule.maximise)

    threshold = results[chosen].val_choice.threshold
    p_test = fitted[chosen][2]
    t = _threshold_value(threshold)
    opt_threshold = results[chosen_on_test].test_choice.threshold
    p_opt = fitted[chosen_on_test][2]
    t_opt = _threshold_value(opt_threshold)
    return WorkflowResult(
        rule=rule,
        candidates=results,
        chosen=chosen,
        chosen_on_test=chosen_on_test,
        threshold=threshold,
        test_metrics=binary_metrics(data.y_test, p_test, t),
        test_value=criterion_on(data.y_test, p_test, t, rule),
        test_auc=roc_auc(data.y_test, p_test),
        optimistic_threshold=opt_threshold,
        optimistic_metrics=binary_metrics(data.y_test, p_opt, t_opt),
        optimistic_value=criterion_on(data.y_test, p_opt, t_opt, rule),
        optimistic_auc=roc_auc(data.y_test, p_opt),
        sizes=sizes,
    )
