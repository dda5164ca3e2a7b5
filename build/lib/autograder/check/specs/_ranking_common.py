"""Invalid-input and edge-case tables shared by the ranking assignments (2 and 3)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..compare import compare
from .case import ref

FAWCETT_Y = [1, 1, 0, 1, 1, 1, 0, 0, 1, 0]
FAWCETT_S = [0.9, 0.8, 0.7, 0.6, 0.55, 0.54, 0.53, 0.52, 0.51, 0.505]


def invalid_cases(cell: str, fn: str, prefix: str = "invalid") -> list:
    """Every bad input a ranking function must reject with ValueError."""
    rows = [
        ("all_negative", "只有负类（单一真实类别）", [0, 0, 0], [0.1, 0.2, 0.3]),
        ("all_positive", "只有正类（单一真实类别）", [1, 1], [0.1, 0.2]),
        ("empty", "空数组", [], []),
        ("length_mismatch", "长度不一致", [1, 0, 1], [0.1, 0.2]),
        ("label_two", "标签含 2（不能强制转换为 1）", [1, 2, 0], [0.3, 0.2, 0.1]),
        ("label_strings", "字符串标签", np.array(["1", "0"]), [0.2, 0.1]),
        ("score_nan", "得分含 NaN", [1, 0], [0.2, float("nan")]),
        ("score_inf", "得分含无穷大", [1, 0], [float("inf"), 0.1]),
        ("score_complex", "复数得分", [1, 0], np.array([0.2 + 0j, 0.1 + 0j])),
        ("two_dimensional", "二维标签", [[1, 0], [0, 1]], [[0.1, 0.2], [0.3, 0.4]]),
    ]
    return [ref(f"{prefix}.{fn}.{key}", cell, 1, fn, f"{fn}：{text}", y, s) for key, text, y, s in rows]


def same_curve(points: tuple[str, str], transform: Callable[[np.ndarray], np.ndarray], what: str) -> Callable[[list], str | None]:
    """Relation of a property case: after a strictly increasing transform of the scores, the curve's
    points (the two fields in ``points``) are unchanged and its thresholds are the transformed ones.

    ``values`` are the student's decoded named tuples (each already equal to the reference's), the
    first for the original scores, the others for ``transform(scores)``.
    """

    def relation(values: list) -> str | None:
        first = dict(zip(values[0].fields, values[0].values))
        for value in values[1:]:
            other = dict(zip(value.fields, value.values))
            for name in points:
                why = compare(first[name], other[name], name)
                if why:
                    return f"{what}：单调变换后 {why}"
            with np.errstate(all="ignore"):
                moved = transform(np.asarray(first["thresholds"], dtype=np.float64))
            why = compare(moved, other["thresholds"], "thresholds")
            if why:
                return f"{what}：阈值应随得分一起变换，但 {why}"
        return None

    return relation
