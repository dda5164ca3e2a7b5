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
* probabilities lie in the closed interval [0, 1];
* every scalar argument (``threshold``, ``beta``, ``n_bins``, ``prior``, the
  costs, ``max_fpr``, ``auc``, the confusion counts) goes through
  :func:`check_scalar`, the course's version of scikit-learn's ``check_scalar``:
  a finite real (or an integer where one is needed), never ``bool``, inside the
  stated interval;
* option arguments (``zero_division``, ``strategy``, ``rule``) go through
  :func:`check_option`.
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
    "check_scalar",
    "check_option",
    "check_threshold",
    "check_zero_division",
    "check_rates",
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


def check_binary_labels(y: Any, name: str = "y_true", hint: str = "") -> np.ndarray:
    """Validate binary labels and return them as a boolean mask (``True`` = positive).

    Parameters
    ----------
    y : array-like
        Labels.  Must be 1-D, non-empty, and contain only the values 0 and 1
        (any integer or floating dtype holding exactly those values) or be a
        boolean array.
    name : str
        Argument name used in error messages.
    hint : str, optional
        Sentence appended to the message about values other than 0 and 1
        (e.g. how to turn scores into predicted labels).

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
        raise ValueError(f"{name} 只能含有标签 0 和 1，发现非法值 {shown}{more}{hint}")
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


def _unwrap_0d(x: Any, label: str) -> Any:
    if isinstance(x, np.ndarray):
        if x.ndim != 0:
            raise ValueError(f"{label}必须是标量，实际形状为 {x.shape}")
        return x[()]
    return x


def _number(v: float) -> str:
    return f"{v:g}"


def _range_phrase(min_val: float | None, max_val: float | None, include_boundaries: str) -> str:
    """Chinese phrase for the allowed range, e.g. ``位于开区间 (0, 1) 内的``; empty when unbounded."""
    low_in = include_boundaries in ("left", "both")
    high_in = include_boundaries in ("right", "both")
    if min_val is not None and max_val is not None:
        kind = {(True, True): "闭区间", (False, False): "开区间"}.get((low_in, high_in), "半开区间")
        interval = f"{'[' if low_in else '('}{_number(min_val)}, {_number(max_val)}{']' if high_in else ')'}"
        return f"位于{kind} {interval} 内的"
    if min_val is not None:
        return f"{'大于或等于' if low_in else '大于'} {_number(min_val)} 的"
    if max_val is not None:
        return f"{'小于或等于' if high_in else '小于'} {_number(max_val)} 的"
    return ""


def check_scalar(
    x: Any,
    name: str,
    target_type: type = numbers.Real,
    *,
    min_val: float | None = None,
    max_val: float | None = None,
    include_boundaries: str = "both",
    description: str | None = None,
) -> Any:
    """Validate a scalar argument's type and range (the course's version of scikit-learn's ``check_scalar``).

    Every scalar argument of :mod:`autograder.reference` (``threshold``,
    ``beta``, ``n_bins``, ``prior``, ``c_fp``, ``c_fn``, ``max_fpr``, ``auc``,
    the confusion counts) goes through this one function, so all of them accept
    and reject the same things and explain a rejection the same way.

    Parameters
    ----------
    x : object
        The value to check.  Python and NumPy integers and floats are accepted,
        and so is a 0-d NumPy array holding one; ``bool`` never is.
    name : str
        Argument name, used at the start of the error message.
    target_type : {numbers.Real, numbers.Integral}, default numbers.Real
        ``numbers.Real`` accepts any finite real number and returns a
        ``float``; ``numbers.Integral`` accepts integers only (``2.0`` is
        rejected, never truncated) and returns an ``int``.
    min_val, max_val : float, optional
        Bounds of the valid interval; ``None`` means unbounded on that side.
    include_boundaries : {"left", "right", "both", "neither"}, default "both"
        Which bounds belong to the interval, as in scikit-learn: ``"left"`` is
        ``[min_val, max_val)``, ``"right"`` is ``(min_val, max_val]``,
        ``"both"`` is ``[min_val, max_val]`` and ``"neither"`` is
        ``(min_val, max_val)``.
    description : str, optional
        Short Chinese gloss shown after the name, e.g. ``"部署时正类比例"``.

    Returns
    -------
    float or int
        ``float(x)`` for ``numbers.Real``, ``int(x)`` for ``numbers.Integral``.

    Raises
    ------
    ValueError
        With a Chinese message naming the argument, what it must be and what
        it is, if ``x`` is a ``bool``, a non-scalar array, a complex number, of
        another type, NaN or infinite, or outside the interval.  Unlike
        scikit-learn (which raises ``TypeError`` for a wrong type) every
        rejection is a ``ValueError``: the course promises ``ValueError`` for
        every bad input.  Inconsistent ``min_val``, ``max_val`` and
        ``include_boundaries`` (a programming error of the caller) are also a
        ``ValueError``.

    See Also
    --------
    sklearn.utils.validation.check_scalar : The model for this function; it
        raises ``TypeError`` for a wrong type, accepts ``bool`` as an integer and
        NaN or infinity as a float, and has no ``description``.

    Examples
    --------
    >>> check_scalar(0.5, "threshold")
    0.5
    >>> check_scalar(10, "n_bins", numbers.Integral, min_val=1)
    10
    >>> check_scalar(0.0, "prior", min_val=0, max_val=1, include_boundaries="neither",
    ...              description="部署时正类比例")
    Traceback (most recent call last):
        ...
    ValueError: prior（部署时正类比例）必须是位于开区间 (0, 1) 内的有限实数，实际为 0.0
    >>> check_scalar(True, "n_bins", numbers.Integral, min_val=1)
    Traceback (most recent call last):
        ...
    ValueError: n_bins 必须是大于或等于 1 的整数，不能是布尔值 True
    """
    if include_boundaries not in ("left", "right", "both", "neither"):
        raise ValueError(f'include_boundaries 只能是 "left"、"right"、"both" 或 "neither"，实际为 {include_boundaries!r}')
    if min_val is None and include_boundaries == "left":
        raise ValueError('include_boundaries="left" 但没有给出 min_val，二者矛盾')
    if max_val is None and include_boundaries == "right":
        raise ValueError('include_boundaries="right" 但没有给出 max_val，二者矛盾')
    integral = target_type is numbers.Integral
    if not integral and target_type is not numbers.Real:
        raise ValueError(f"target_type 只能是 numbers.Real 或 numbers.Integral，实际为 {target_type!r}")
    label = f"{name} " if description is None else f"{name}（{description}）"
    wanted = f"{_range_phrase(min_val, max_val, include_boundaries)}{'整数' if integral else '有限实数'}"
    value = _unwrap_0d(x, label)
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{label}必须是{wanted}，不能是布尔值 {x!r}")
    if isinstance(value, (complex, np.complexfloating)):
        raise ValueError(f"{label}必须是{wanted}，不能是复数 {x!r}")
    if not isinstance(value, target_type):
        if integral and isinstance(value, numbers.Real):
            raise ValueError(f"{label}必须是{wanted}，实际为 {value!r}（{type(value).__name__}，不会取整）")
        raise ValueError(f"{label}必须是{wanted}，实际类型为 {type(value).__name__}（{x!r}）")
    value = int(value) if integral else float(value)
    if not integral and not np.isfinite(value):
        raise ValueError(f"{label}必须是{wanted}，实际为 {value!r}")
    low_in = include_boundaries in ("left", "both")
    high_in = include_boundaries in ("right", "both")
    too_low = min_val is not None and (value < min_val if low_in else value <= min_val)
    too_high = max_val is not None and (value > max_val if high_in else value >= max_val)
    if too_low or too_high:
        raise ValueError(f"{label}必须是{wanted}，实际为 {value!r}")
    return value


def _show_option(option: Any) -> str:
    return f'"{option}"' if isinstance(option, str) else repr(option)


def check_option(value: Any, name: str, options: tuple) -> Any:
    """Validate a choice among a few options and return the matching option.

    A string option matches only that exact string (no case folding); a
    numeric option matches a real, non-``bool`` number equal to it (so ``0``
    matches ``0.0`` but ``False`` does not).

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Argument name for the error message.
    options : tuple
        The allowed values, in the order the message lists them.

    Returns
    -------
    object
        The element of ``options`` that ``value`` matches.

    Raises
    ------
    ValueError
        If ``value`` matches no option; the Chinese message lists them all.

    Examples
    --------
    >>> check_option("quantile", "strategy", ("uniform", "quantile"))
    'quantile'
    >>> check_option("kmeans", "strategy", ("uniform", "quantile"))
    Traceback (most recent call last):
        ...
    ValueError: strategy 只能是 "uniform" 或 "quantile"，实际为 'kmeans'
    """
    for option in options:
        if isinstance(option, str):
            if isinstance(value, str) and value == option:
                return option
        elif isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) and value == option:
            return option
    shown = [_show_option(o) for o in options]
    listed = shown[0] if len(shown) == 1 else "、".join(shown[:-1]) + f" 或 {shown[-1]}"
    raise ValueError(f"{name} 只能是 {listed}，实际为 {value!r}")


def check_threshold(threshold: Any, name: str = "threshold") -> float:
    """Validate a finite real scalar (a threshold) and return it as ``float``; see :func:`check_scalar`."""
    return check_scalar(threshold, name, numbers.Real)


def check_zero_division(zero_division: Any) -> str | float:
    """Validate the ``zero_division`` policy: ``"nan"``, ``0`` or ``"raise"``.

    Returns ``"nan"``, ``0.0`` or ``"raise"``.  Anything else (including ``1``,
    ``False``, ``None``, ``"NaN"`` and ``float("nan")``, all of which
    scikit-learn's ``zero_division`` accepts or spells differently) is rejected.
    """
    policy = check_option(zero_division, "zero_division", ("nan", 0, "raise"))
    return 0.0 if policy == 0 else policy


def check_rates(value: Any, name: str) -> np.ndarray:
    """Validate a rate or an array of rates (TPR, FPR): real, finite, inside [0, 1]; return float64."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} 必须是 [0, 1] 内的有限实数（或此类数组），实际为 {value!r}")
    return arr.astype(np.float64)


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
