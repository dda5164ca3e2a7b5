"""Reference implementation of the course's binary-classification metrics.

Pure NumPy.  Every grade, quiz key and number printed in the book is checked
against this package.  One module per idea:

* :mod:`._validation` -- input checks shared by every function, with one
  validator for all scalar arguments (:func:`._validation.check_scalar`);
* :mod:`.threshold_metrics` -- confusion matrix and fixed-threshold metrics;
* :mod:`.ranking` -- ROC, AUC, PR and AP on one sort-and-scan kernel, and d';
* :mod:`.probability` -- Brier score, log loss, calibration curve and ECE;
* :mod:`.decision` -- prior-corrected precision, expected cost, threshold choice;
* :mod:`.intervals` -- confidence intervals for a proportion, AUC and AP, and
  DeLong's paired test of two AUCs.

Names shared with scikit-learn mean what they mean there, so that code written
the scikit-learn way never silently computes something else:

* ``fbeta_score``, ``matthews_corrcoef``, ``balanced_accuracy`` and
  ``confusion_counts`` take predicted labels ``(y_true, y_pred)``; threshold
  scores first (``y_score >= threshold``).  Scores passed as ``y_pred`` are
  rejected with a message that says so.  :func:`binary_metrics` (no
  scikit-learn twin) takes ``(y_true, y_score, threshold)``.
* the curves unpack in scikit-learn's order: ``fpr, tpr, thresholds =
  roc_curve(...)``, ``precision, recall, thresholds = pr_curve(...)`` and
  ``prob_true, prob_pred, count, bin_edges = calibration_curve(...)``.

Every function documents, under *See Also*, how it differs from its
scikit-learn counterpart (``tests/reference`` asserts each difference).
"""

from ._validation import UndefinedMetricError
from .decision import ThresholdChoice, choose_threshold, expected_cost, prevalence_corrected_precision
from .intervals import ConfidenceInterval, DelongTest, ap_ci, auc_ci, delong_test, proportion_ci
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
    "ConfidenceInterval",
    "DelongTest",
    "proportion_ci",
    "auc_ci",
    "ap_ci",
    "delong_test",
]
