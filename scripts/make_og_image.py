"""Draw the site's Open Graph image (book/_static/og-image.png, 1200x630) with the book's fonts.

Run once after changing the title: ``.venv/bin/python scripts/make_og_image.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

from coursebook import COLORS, setup_plotting  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "book" / "_static" / "og-image.png"


def main() -> None:
    setup_plotting()
    fig = plt.figure(figsize=(12, 6.3), dpi=100)
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, 1200)
    ax.set_ylim(0, 630)
    ax.axis("off")
    ax.add_patch(Rectangle((0, 0), 1200, 630, color=COLORS["curve"]))
    ax.add_patch(FancyBboxPatch((90, 175), 280, 280, boxstyle="round,pad=0,rounding_size=30", color="white"))
    for (x, y), key in zip([(110, 325), (250, 325), (110, 195), (250, 195)], ["tp", "fn", "fp", "tn"]):
        ax.add_patch(Rectangle((x, y), 110, 110, color=COLORS[key]))
    ax.text(440, 360, "评价二分类模型", color="white", fontsize=64, fontweight="bold", va="center")
    ax.text(444, 260, "混淆矩阵 · ROC 与 PR 曲线 · AUC 与 AP", color="#dbe7f3", fontsize=26, va="center")
    ax.text(444, 205, "概率校准 · 评价方法 · 编程作业", color="#dbe7f3", fontsize=26, va="center")
    fig.savefig(OUT, dpi=100)
    print(OUT)


if __name__ == "__main__":
    main()
