"""Reference implementation of the course's binary-classification metrics.

Pure NumPy.  Every grade, quiz key and number printed in the book is checked
against this package.  One module per idea:

* :mod:`._validation` -- input checks shared by every function;
* :mod:`.threshold_metrics` -- confusion matrix and fixed-threshold metrics;
* :mod:`.ranking` -- ROC, AUC, PR and AP on one sort-and-scan kernel, and d';
* :mod:`.probability` -- Brier score, log loss, calibration curve and ECE;
* :mod:`.decision` -- prior-corrected precision, expected cost, threshold choice.
"""

from ._validation import UndefinedMetricError
from .decision import ThresholdChoice, choose_threshold, expected_cost, prevalence_corrected_precision
from .probability import (
    CalibrationCurve,
    brier_baseline,
    brier_score,
    calibration_curve,
    expected_calibration_error,
    log_loss,
)
from .ranking import PrCurve, RocCurve, average_precision, d_prime, pairwise_auc, pr_curve, roc_auc, roc_curve
from .threshold_metrics import (
    BinaryMetrics,
    ConfusionCounts,
    balanced_accuracy,
    binary_metrics,
    confusion_counts,
    fbeta_score,
    matthews_corrcoef,
    metrics_from_counts,
)

__all__ = [
    "UndefinedMetricError",
    "ConfusionCounts",
    "BinaryMetrics",
    "confusion_counts",
    "binary_metrics",
    "metrics_from_counts",
    "fbeta_score",
    "matthews_corrcoef",
    "balanced_accuracy",
    "RocCurve",
    "PrCurve",
    "roc_curve",
    "roc_auc",
    "pairwise_auc",
    "pr_curve",
    "average_precision",
    "d_prime",
    "CalibrationCurve",
    "brier_score",
    "brier_baseline",
    "log_loss",
    "calibration_curve",
    "expected_calibration_error",
    "ThresholdChoice",
    "prevalence_corrected_precision",
    "expected_cost",
    "choose_threshold",
]
