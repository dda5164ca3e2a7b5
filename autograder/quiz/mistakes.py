"""The named mistakes that wrong options of the question templates stand for: one place for each.

A mistake that the grader also recognises in programming assignments 1-4 is an entry of
:mod:`autograder.check.misconceptions` and is taken from there (its id, title and book section); this module
lists only the mistakes that concern a number a student computes by hand and no graded function, so a
misconception is defined once whichever of the two uses it (``tests/quiz/test_mistakes.py`` checks that no
id is in both and that every section heading is the page's own).
"""

from __future__ import annotations

from ..check.misconceptions import CATALOGUE
from .model import Mistake, TemplateError

__all__ = ["mistake", "QUIZ_MISTAKES", "ALL_MISTAKES"]


def _m(mistake_id: str, title: str, page: str, label: str, section: str) -> Mistake:
    return Mistake(mistake_id, title, f"book/{page}", label, section)


QUIZ_MISTAKES: tuple[Mistake, ...] = (
    # ---- confusion matrix and fixed-threshold metrics
    _m("fp_tn_confused", "把真负例当成了假正例", "binary/confusion", "binary-confusion-cells", "四个格子"),
    _m("prediction_only", "只看了预测，没有看真实标签", "binary/confusion", "binary-confusion-cells", "四个格子"),
    _m("specificity_as_fpr", "把特异性当成了假正率", "binary/fixed_threshold", "binary-fpr", "假正率与特异性"),
    _m("denominator_all", "比例的分母用了全部样本", "binary/fixed_threshold", "binary-fixed-threshold", "固定阈值下的常见指标"),
    _m("recall_as_fnr", "把召回率当成了假负率", "binary/fixed_threshold", "binary-recall", "召回率"),
    _m("costs_swapped", "两种误判代价对调了", "binary/thresholds_costs", "binary-cost", "按误判代价选阈值"),
    _m("prior_ignored", "没有按正类比例加权", "binary/thresholds_costs", "binary-cost", "按误判代价选阈值"),
    # ---- ranking: ROC, AUC, PR, AP, d'
    _m("auc_reversed", "把排反的样本对当成了排对的", "binary/auc", "binary-auc", "ROC-AUC"),
    _m("auc_baseline_prevalence", "以为 AUC 的参照随正类比例变", "ap_auc/auc", "apauc-auc-baseline", "AUC 的基线：0.5，与正类比例无关"),
    _m("pr_baseline_half", "把 PR 曲线的参照当成了 0.5", "binary/pr", "binary-pr", "Precision-Recall 曲线与 AP"),
    _m("baseline_negative_share", "把负类比例当成了精确率的参照", "binary/pr", "binary-pr", "Precision-Recall 曲线与 AP"),
    _m("auc_as_ap", "把 AUC 当成了 AP", "binary/pr", "binary-ap", "平均精确率 AP"),
    _m("ap_as_prevalence", "把正类比例当成了 AP", "ap_auc/ap", "apauc-ap-baseline", "AP 的基线：样本多时约为 π，正类少时更高"),
    _m("dprime_no_sqrt2", "漏掉了系数 √2", "ap_auc/dprime", "apauc-dprime-derivation", "推导：等方差高斯得分"),
    _m("dprime_two", "把系数 √2 写成了 2", "ap_auc/dprime", "apauc-dprime-derivation", "推导：等方差高斯得分"),
    _m("dprime_sqrt2_inverted", "除以 √2 写成了乘以 √2", "ap_auc/dprime", "apauc-dprime-derivation", "推导：等方差高斯得分"),
    _m("dprime_auc_as_z", "没有先把 AUC 换成 z 值", "ap_auc/dprime", "apauc-dprime", "d′：把 AUC 换算成“相隔几个标准差”"),
    _m("binormal_sigma_ignored", "没有除以得分的标准差", "case_study/index", "cs-separation", "分得越开，曲线越靠近左上角"),
    _m("flip_mirror", "把反转预测当成了关于对角线的镜像", "case_study/index", "cs-roc-plane", "ROC 平面上的位置"),
    _m("flip_one_class", "只反转了一类样本", "case_study/index", "cs-roc-plane", "ROC 平面上的位置"),
    # ---- probabilities and calibration
    _m("brier_absolute", "Brier 分数忘了平方", "binary/probability", "binary-brier", "Brier 分数"),
    _m("conservative_better", "把离 0.5 更近的概率当成了更好", "binary/probability", "binary-brier", "Brier 分数"),
    _m("calibration_axes_swapped", "把校准曲线的两个坐标弄反了", "binary/probability", "binary-calibration-curve", "校准曲线"),
    _m("calibration_direction_reversed", "把高估与低估弄反了", "binary/probability", "binary-calibration-curve", "校准曲线"),
    _m("calibration_as_ranking", "把校准当成了排序能力", "binary/summary", "binary-three-levels-summary", "同一批样本，三种问题"),
    _m("calibration_signed_gaps", "正负偏差互相抵消了", "calibration/beyond_mean", "cal-beyond-mean", "均值匹配与群体校准"),
    _m("calibration_max_gap", "只取了偏差最大的一档", "calibration/ece", "cal-ece", "分箱估计：ECE 与校准曲线"),
    _m("calibration_gaps_summed", "各箱的差距直接相加", "calibration/ece", "cal-ece", "分箱估计：ECE 与校准曲线"),
    _m("mean_unweighted", "平均时没有按样本数加权", "calibration/beyond_mean", "cal-beyond-mean", "均值匹配与群体校准"),
    _m("mean_as_ece", "把 ECE 当成了均值之差", "calibration/beyond_mean", "cal-beyond-mean", "均值匹配与群体校准"),
    _m("sign_reversed", "差的方向弄反了", "calibration/beyond_mean", "cal-beyond-mean", "均值匹配与群体校准"),
    # ---- evaluation methods
    _m("nested_no_refit", "漏掉了外层每一折的重新训练", "methodology/resampling", "meth-nested", "嵌套交叉验证"),
    _m("nested_refit_once", "重新训练只算了一次", "methodology/resampling", "meth-nested", "嵌套交叉验证"),
    _m("nested_added", "两层的次数相加而不是相乘", "methodology/resampling", "meth-nested", "嵌套交叉验证"),
    _m("bootstrap_limit", "用了 n 很大时的极限", "methodology/resampling", "meth-bootstrap", "自助法"),
    _m("bootstrap_complement", "算成了至少被抽中一次的概率", "methodology/resampling", "meth-bootstrap", "自助法"),
    _m("bootstrap_single_draw", "只算了一次抽样", "methodology/resampling", "meth-bootstrap", "自助法"),
    _m("e632_weights_swapped", ".632 估计量的两个权重对调了", "methodology/estimates", "meth-optimism", "乐观偏差与自助校正"),
    _m("e632_plain_mean", "两种误差直接取了平均", "methodology/estimates", "meth-optimism", "乐观偏差与自助校正"),
    _m("e632_oob_only", "只用了留一自助误差", "methodology/estimates", "meth-optimism", "乐观偏差与自助校正"),
    _m("wald_interval", "用了 Wald 置信区间", "methodology/intervals", "meth-ci-proportion",
       "比例型指标：Wilson 置信区间与 Clopper–Pearson 置信区间"),
    _m("z_one_sided", "用了单侧的 z 值", "methodology/intervals", "meth-ci-proportion",
       "比例型指标：Wilson 置信区间与 Clopper–Pearson 置信区间"),
    _m("wilson_centered", "以为 Wilson 置信区间以 k/n 为中心", "methodology/intervals", "meth-ci-proportion",
       "比例型指标：Wilson 置信区间与 Clopper–Pearson 置信区间"),
    _m("rule_of_three", "用了三法则", "methodology/intervals", "meth-ci-proportion",
       "比例型指标：Wilson 置信区间与 Clopper–Pearson 置信区间"),
    _m("mcnemar_no_correction", "漏掉了连续性校正", "methodology/tests", "meth-mcnemar", "McNemar 检验"),
    _m("mcnemar_all_samples", "把意见一致的样本也算了进去", "methodology/tests", "meth-mcnemar", "McNemar 检验"),
    _m("mcnemar_not_squared", "给出了没有平方的标准化差", "methodology/tests", "meth-mcnemar", "McNemar 检验"),
    _m("macro_as_micro", "把宏平均算成了微平均", "methodology/multiclass", "meth-mc-per-class", "逐类精确率、召回率与 F1"),
    _m("rows_columns_swapped", "把混淆矩阵的行和列弄反了", "methodology/multiclass", "meth-mc-confusion", "错误率、准确率与混淆矩阵"),
    _m("rmse_no_root", "忘了开平方", "methodology/regression", "meth-reg-abs", "MSE、MAE 与 RMSE"),
    _m("rmse_as_mae", "用了绝对误差的平均", "methodology/regression", "meth-reg-abs", "MSE、MAE 与 RMSE"),
    _m("rmse_no_mean", "平方和没有除以样本数", "methodology/regression", "meth-reg-abs", "MSE、MAE 与 RMSE"),
)

_FROM_CHECK = {m.id: Mistake(m.id, m.title, m.page, m.label, m.section) for m in CATALOGUE}
_QUIZ = {m.id: m for m in QUIZ_MISTAKES}
#: Every mistake a template may name: the grader's catalogue first, then the quiz's own.
ALL_MISTAKES: dict[str, Mistake] = {**_FROM_CHECK, **_QUIZ}


def mistake(mistake_id: str) -> Mistake:
    """The mistake called ``mistake_id`` (from the grader's catalogue or this module's list)."""
    try:
        return ALL_MISTAKES[mistake_id]
    except KeyError:
        raise TemplateError(f"没有名为 {mistake_id!r} 的常见错误") from None
