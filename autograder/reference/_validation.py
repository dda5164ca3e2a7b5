"""Input validation shared by every public function of :mod:`autograder.reference`.

Every rejection is a :class:`ValueError` whose message (in Chinese, like all
student-facing text of the course) names the argument and the problem.  Nothing
is coerced silently:

* arrays must be non-empty, one-dimensional and of equal length;
* scores and probabilities must be real (integer or floating dtype) and finite;
  ``bool``, complex, string and ``object`` arrays are rejected;
* labels are checked on the raw values *before* any dtype conversion: only the
  values 0 and 1 are accepted (``1.0`` is the value 1 and is accepted; ``0.5``,
  ``2``, ``-1`` and ``"1"`` are rejected, never rounded or parsed);
* boolean label arrays are accepted and read as ``True`` = positive class (1),
  ``False`` = negative class (0), the same meaning NumPy gives ``bool`` -> ``int``;
* thresholds are finite real scalars (Python or NumPy ``int``/``float``, not ``bool``);
* probabilities lie in the closed interval [0, 1].
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "UndefinedMetricError",
    "check_binary_labels",
    "check_scores",
    "check_probabilities",
    "check_same_length",
    "check_both_classes",
    "check_threshold",
    "check_zero_division",
    "check_positive_int",
    "safe_divide",
]

# Integers up to 2**53 convert to float64 exactly; larger ones could merge distinct
# scores into one tie group, which would change curves silently.
_MAX_EXACT_INT = 2**53


class UndefinedMetricError(ValueError, ZeroDivisionError):
    """A metric's denominator is zero and ``zero_division="raise"`` was requested.

    It derives from both :class:`ValueError` and :class:`ZeroDivisionError` so that
    callers may catch either.
    """


def _as_1d_array(values: Any, name: str) -> np.ndarray:
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} 必须是一维数组，而不是字符串 {values!r}")
    if values is None:
        raise ValueError(f"{name} 不能是 None")
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:  # ragged nested sequences
        raise ValueError(f"{name} 无法转换为一维数组：{exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} 必须是一维数组，实际维数为 {arr.ndim}，形状为 {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} 为空数组，至少需要一个样本")
    return arr


def _reject_bad_kind(arr: np.ndarray, name: str, *, allow_bool: bool) -> None:
    kind = arr.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} 含有复数（dtype={arr.dtype}），只接受实数")
    if kind in "USa":
        raise ValueError(f"{name} 含有字符串（dtype={arr.dtype}），只接受数值")
    if kind == "O":
        raise ValueError(f"{name} 是 object 数组（可能混有 None、字符串或其他对象），只接受数值数组")
    if kind == "b" and not allow_bool:
        raise ValueError(f"{name} 是布尔数组；得分或概率必须是整数或浮点数")
    if kind not in "biuf":
        raise ValueError(f"{name} 的 dtype={arr.dtype} 不是实数类型")


def check_binary_labels(y: Any, name: str = "y_true") -> np.ndarray:
    """Validate binary labels and return them as a boolean mask (``True`` = positive).

    Parameters
    ----------
    y : array-like
        Labels.  Must be 1-D, non-empty, and contain only the values 0 and 1
        (any integer or floating dtype holding exactly those values) or be a
        boolean array.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where the label is 1.

    Raises
    ------
    ValueError
        If the array is empty, not 1-D, non-numeric, or holds any value other
        than 0 and 1 (including NaN and infinities).
    """
    arr = _as_1d_array(y, name)
    _reject_bad_kind(arr, name, allow_bool=True)
    if arr.dtype.kind == "b":
        return arr.copy()
    is_one = arr == 1
    valid = is_one | (arr == 0)
    if not valid.all():
        bad = arr[~valid]
        shown = ", ".join(repr(v.item()) for v in bad[:5])
        more = "" if bad.size <= 5 else f" 等共 {bad.size} 个"
        raise ValueError(f"{name} 只能含有标签 0 和 1，发现非法值 {shown}{more}")
    return is_one


def check_scores(s: Any, name: str = "y_score") -> np.ndarray:
    """Validate real, finite scores and return them as ``float64``.

    Integer scores are converted to ``float64`` only when the conversion is exact
    (absolute values up to 2**53); larger integers are rejected.

    Raises
    ------
    ValueError
        If the array is empty, not 1-D, boolean, complex, non-numeric, or holds
        NaN or an infinity.
    """
    arr = _as_1d_array(s, name)
    _reject_bad_kind(arr, name, allow_bool=False)
    if arr.dtype.kind in "iu":
        if arr.dtype.itemsize >= 8 and np.abs(arr.astype(np.float64)).max() > _MAX_EXACT_INT:
            raise ValueError(f"{name} 含有绝对值超过 2**53 的整数，无法精确转换为浮点数")
        return arr.astype(np.float64)
    if arr.dtype.itemsize > 8:
        raise ValueError(f"{name} 的 dtype={arr.dtype} 精度高于 float64，转换会丢失精度")
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64)  # float16/32 -> float64 is exact
    finite = np.isfinite(arr)
    if not finite.all():
        bad = arr[~finite]
        n_nan = int(np.isnan(bad).sum())
        n_inf = bad.size - n_nan
        parts = []
        if n_nan:
            parts.append(f"{n_nan} 个 NaN")
        if n_inf:
            parts.append(f"{n_inf} 个无穷大")
        raise ValueError(f"{name} 含有非有限值（{'、'.join(parts)}），只接受有限实数")
    return arr


def check_probabilities(p: Any, name: str = "y_prob") -> np.ndarray:
    """Validate probabilities: real, finite and inside the closed interval [0, 1]."""
    arr = check_scores(p, name)
    outside = (arr < 0.0) | (arr > 1.0)
    if outside.any():
        bad = arr[outside]
        shown = ", ".join(repr(float(v)) for v in bad[:5])
        raise ValueError(f"{name} 必须是 [0, 1] 内的概率，发现越界值 {shown}")
    return arr


def check_same_length(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """Raise if two validated 1-D arrays differ in length."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{name_a} 与 {name_b} 长度不一致：{a.shape[0]} 与 {b.shape[0]}")


def check_both_classes(positive: np.ndarray, name: str = "y_true") -> tuple[int, int]:
    """Return ``(n_pos, n_neg)``; raise if either class is absent.

    ROC, PR, AUC and AP are undefined with a single class: TPR needs positives and
    FPR needs negatives.
    """
    n_pos = int(np.count_nonzero(positive))
    n_neg = int(positive.shape[0] - n_pos)
    if n_pos == 0:
        raise ValueError(f"{name} 中没有正类（标签 1），TPR、Recall 及曲线无定义")
    if n_neg == 0:
        raise ValueError(f"{name} 中没有负类（标签 0），FPR 及 ROC 曲线无定义")
    return n_pos, n_neg


def check_threshold(threshold: Any, name: str = "threshold") -> float:
    """Validate a finite real scalar threshold and return it as ``float``."""
    if isinstance(threshold, (bool, np.bool_)):
        raise ValueError(f"{name} 必须是有限实数，不能是布尔值 {threshold!r}")
    if isinstance(threshold, np.ndarray):
        if threshold.ndim != 0:
            raise ValueError(f"{name} 必须是标量，实际形状为 {threshold.shape}")
        threshold = threshold[()]
        if isinstance(threshold, np.bool_):
            raise ValueError(f"{name} 必须是有限实数，不能是布尔值")
    if isinstance(threshold, (complex, np.complexfloating)):
        raise ValueError(f"{name} 必须是实数，不能是复数 {threshold!r}")
    if not isinstance(threshold, numbers.Real):
        raise ValueError(f"{name} 必须是有限实数标量，实际类型为 {type(threshold).__name__}")
    value = float(threshold)
    if not np.isfinite(value):
        raise ValueError(f"{name} 必须是有限实数，实际为 {value!r}")
    return value


def check_zero_division(zero_division: Any) -> str | float:
    """Validate the ``zero_division`` policy: ``"nan"``, ``0`` or ``"raise"``.

    Returns ``"nan"``, ``0.0`` or ``"raise"``.  Anything else (including ``1``,
    ``False``, ``None`` and ``float("nan")``) is rejected.
    """
    if isinstance(zero_division, str):
        if zero_division in ("nan", "raise"):
            return zero_division
    elif (
        isinstance(zero_division, (int, float, np.integer, np.floating))
        and not isinstance(zero_division, (bool, np.bool_))
        and zero_division == 0
    ):
        return 0.0
    raise ValueError(f'zero_division 只能是 "nan"、0 或 "raise"，实际为 {zero_division!r}')


def check_positive_int(value: Any, name: str) -> int:
    """Validate a strictly positive integer (not ``bool``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} 必须是正整数，实际为 {value!r}")
    if value < 1:
        raise ValueError(f"{name} 必须是正整数，实际为 {value!r}")
    return int(value)


def safe_divide(numerator: float, denominator: float, zero_division: str | float, metric: str, denominator_name: str) -> float:
    """Divide two counts, applying the ``zero_division`` policy when the denominator is 0.

    No epsilon is ever added: a non-zero denominator gives the exact quotient.
    """
    if denominator != 0:
        return float(numerator) / float(denominator)
    if zero_division == "raise":
        raise UndefinedMetricError(f"{metric} 无定义：分母 {denominator_name} 为 0")
    if zero_division == "nan":
        return float("nan")
    return float(zero_division)
