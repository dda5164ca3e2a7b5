"""Matplotlib animations as a light, self-contained HTML frame player.

``matplotlib``'s ``to_jshtml`` inlines every frame as a full-colour PNG and loads all of them when
the page opens (the ROC page weighed 2.4 MB).  :func:`frame_player` renders the frames itself, as
palette PNGs (a few dozen colours suffice for line plots: about a fifth of the bytes), and writes
a small player:

* the first frame is the poster (``<img>``, inline, shown at once, also without JavaScript);
* every frame is listed in the ``data-frames`` attribute; the player loads frames only when the
  reader presses a button or moves the slider.  In the built site the Sphinx extension
  ``book/_ext/anim_frames.py`` moves these frames out of the HTML into ``_images/`` files, so the
  page itself carries the poster only; in a downloaded notebook they stay inline and it plays offline;
* the PDF edition prints a strip of frames instead (``coursebook/print.js``);
* a figure whose panels sit side by side (the ROC animations: the samples and the curve) is rendered a
  second time with its panels in one column, listed in ``data-frames-narrow``: in a box narrower than
  :data:`NARROW_PX` (a phone) the player shows those frames, so the whole figure fits the screen with
  readable labels instead of a wide frame cut at the screen's edge.

Buttons carry Chinese labels; the markup keeps matplotlib's class names (``animation``,
``anim-slider``, ``anim-buttons``) so a reader (and the tests) find the same controls.
"""

from __future__ import annotations

import base64
import html
import io
import uuid

import numpy as np
from matplotlib.animation import AbstractMovieWriter, Animation
from matplotlib.figure import Figure
from PIL import Image

#: Palette size of the frames; the book's figures use fewer colours than this plus anti-aliasing.
PALETTE_COLOURS = 64
#: Below this width of the player's box (CSS px), the frames with the panels in one column are shown.
NARROW_PX = 560
#: Width (inches) of the one-column frames: at the figure's dpi, about twice a phone's 343 px box.
NARROW_WIDTH_IN = 4.8

_BUTTONS = (  # (action, text, Chinese name: the button's tooltip and its name for assistive tools)
    ("first", "|◀◀", "第一帧"),
    ("prev", "◀|", "上一帧"),
    ("play", "▶", "播放"),
    ("pause", "||", "暂停"),
    ("next", "|▶", "下一帧"),
    ("last", "▶▶|", "最后一帧"),
)

_PLAYER_JS = """
(function () {
  if (window.courseFramePlayer) { window.courseFramePlayer(document.currentScript.previousElementSibling); return; }
  window.courseFramePlayer = function (box) {
    if (!box || box.dataset.ready) return;
    box.dataset.ready = "1";
    function list(name) { return (box.getAttribute(name) || "").split(/\\s+/).filter(Boolean); }
    var wide = list("data-frames"), narrow = list("data-frames-narrow");
    var img = box.querySelector("img.anim-frame"), slider = box.querySelector("input.anim-slider");
    var interval = parseInt(box.getAttribute("data-interval") || "500", 10), timer = null, loaded = null;
    function pick() { return narrow.length && box.clientWidth < NARROW_PX ? narrow : wide; }
    var frames = pick();
    function load() {
      if (loaded) return;
      loaded = frames.map(function (src) { var im = new Image(); im.src = src; return im; });
    }
    function show(k) {
      load();
      k = Math.max(0, Math.min(frames.length - 1, k));
      slider.value = k;
      img.src = frames[k];
      img.alt = box.getAttribute("data-alt") + "（第 " + (k + 1) + " / " + frames.length + " 帧）";
    }
    function fit() {  // the layout for this width: only the frame in view is fetched
      var f = pick();
      if (f === frames && img.getAttribute("src") === frames[+slider.value]) return;
      frames = f; loaded = null;
      img.src = frames[+slider.value];
    }
    if (frames !== wide) img.src = frames[0];
    window.addEventListener("resize", fit);
    function pause() { if (timer) { clearInterval(timer); timer = null; } }
    function play() {
      pause(); load();
      if (+slider.value >= frames.length - 1) show(0);
      timer = setInterval(function () {
        if (+slider.value >= frames.length - 1) { pause(); return; }
        show(+slider.value + 1);
      }, interval);
    }
    var actions = {
      first: function () { pause(); show(0); }, prev: function () { pause(); show(+slider.value - 1); },
      play: play, pause: pause,
      next: function () { pause(); show(+slider.value + 1); }, last: function () { pause(); show(frames.length - 1); }
    };
    box.querySelectorAll("button[data-action]").forEach(function (b) {
      b.addEventListener("click", actions[b.getAttribute("data-action")]);
    });
    slider.addEventListener("input", function () { pause(); show(+slider.value); });
  };
  window.courseFramePlayer(document.currentScript.previousElementSibling);
})();
"""

_CSS = """
.animation.course-anim { display: block; max-width: 100%; text-align: center; margin: 0.5em 0; }
.course-anim img.anim-frame { max-width: 100%; height: auto; }
.course-anim input.anim-slider { width: min(100%, 420px); }
.course-anim .anim-buttons button { min-width: 2.6em; min-height: 2.2em; margin: 2px; padding: 0 0.4em; }
"""


class _FrameCollector(AbstractMovieWriter):
    """A movie writer that keeps every frame as palette-PNG bytes instead of writing a file."""

    def __init__(self, dpi: float | None) -> None:
        super().__init__(fps=1)
        self._dpi = dpi
        self.frames: list[bytes] = []

    def setup(self, fig, outfile, dpi=None) -> None:  # noqa: D102 - matplotlib's writer protocol
        super().setup(fig, outfile, self._dpi or dpi)

    def grab_frame(self, **savefig_kwargs) -> None:  # noqa: D102
        buffer = io.BytesIO()
        self.fig.savefig(buffer, format="png", dpi=self.dpi, facecolor="white")
        self.frames.append(palette_png(buffer.getvalue()))

    def finish(self) -> None:  # noqa: D102
        pass


def palette_png(png: bytes, colours: int = PALETTE_COLOURS) -> bytes:
    """Re-encode a PNG with an adaptive palette of ``colours`` colours (smaller, visually the same)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    quantized = image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantized.save(out, format="PNG", optimize=True)
    return out.getvalue()


def render_frames(anim: Animation, dpi: float | None = None) -> list[bytes]:
    """Every frame of ``anim`` as palette-PNG bytes (the figure's dpi unless ``dpi`` is given)."""
    collector = _FrameCollector(dpi)
    anim.save("unused.png", writer=collector)
    return collector.frames


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` of PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


class FramePlayer:
    """HTML of a frame player; displayed by IPython/myst-nb through ``_repr_html_``."""

    def __init__(self, frames: list[bytes], interval_ms: int, alt: str, narrow: list[bytes] | None = None) -> None:
        if not frames:
            raise ValueError("动画至少需要一帧")
        if narrow is not None and len(narrow) != len(frames):
            raise ValueError(f"单列版本的帧数（{len(narrow)}）与动画的帧数（{len(frames)}）不同")
        self.frames = frames
        self.narrow = narrow or []
        self.interval_ms = int(interval_ms)
        self.alt = alt

    def _repr_html_(self) -> str:
        uris = [data_uri(f) for f in self.frames]
        last = len(uris) - 1
        alt = html.escape(self.alt, quote=True)
        buttons = "".join(
            f'<button type="button" data-action="{action}" title="{label}" aria-label="{label}">{text}</button>'
            for action, text, label in _BUTTONS
        )
        ident = uuid.uuid4().hex[:12]
        narrow = f'data-frames-narrow="{" ".join(data_uri(f) for f in self.narrow)}" ' if self.narrow else ""
        return (
            f"<style>{_CSS}</style>"
            f'<div class="animation course-anim" id="anim-{ident}" data-interval="{self.interval_ms}" '
            f'data-alt="{alt}" {narrow}data-frames="{" ".join(uris)}">'
            f'<img class="anim-frame" src="{uris[0]}" alt="{alt}（第 1 / {last + 1} 帧）" decoding="async">'
            f'<div class="anim-controls"><input type="range" class="anim-slider" min="0" max="{last}" step="1" value="0" '
            f'aria-label="{alt}：选择帧">'
            f'<div class="anim-buttons">{buttons}</div></div></div>'
            f"<script>{_PLAYER_JS.replace('NARROW_PX', str(NARROW_PX))}</script>"
        )


def frame_player(anim: Animation, alt: str, *, dpi: float | None = None) -> FramePlayer:
    """Render ``anim`` into a :class:`FramePlayer` (display it, or return it as a cell's last value).

    Parameters
    ----------
    anim : matplotlib.animation.Animation
        The animation; its interval (ms) becomes the player's frame interval.
    alt : str
        Chinese description of the animation (the frames' alternative text).
    dpi : float, optional
        Resolution of the frames (default: the figure's).
    """
    frames = render_frames(anim, dpi)
    narrow = render_frames(anim, dpi) if one_column(anim._fig) else None
    interval = getattr(anim, "_interval", 500)
    return FramePlayer(frames, int(np.clip(interval, 50, 5000)), alt, narrow)


def one_column(fig: Figure) -> bool:
    """Lay out a figure whose panels sit side by side in one row as one column, :data:`NARROW_WIDTH_IN` wide
    (the panels in their left-to-right order, top to bottom; the title stays on top).

    Returns False, leaving the figure as it is, when it has a single panel or its panels are not in one row.
    """
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec() is not None]
    if len(axes) < 2 or len({round(ax.get_position().y0, 2) for ax in axes}) != 1:
        return False
    axes.sort(key=lambda ax: ax.get_position().x0)
    width, height = fig.get_size_inches()
    grid = fig.add_gridspec(len(axes), 1)
    for k, ax in enumerate(axes):
        ax.set_subplotspec(grid[k])
    panel = width / len(axes)  # each panel keeps about its own proportions, scaled to the column's width
    fig.set_size_inches(NARROW_WIDTH_IN, len(axes) * height * NARROW_WIDTH_IN / panel / 1.15)
    fig.tight_layout()
    return True
