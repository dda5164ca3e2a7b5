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
* the PDF edition prints a strip of frames instead (``coursebook/print.js``).

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
from PIL import Image

#: Palette size of the frames; the book's figures use fewer colours than this plus anti-aliasing.
PALETTE_COLOURS = 64

_BUTTONS = (  # (action, text, Chinese label, English title kept for assistive tools)
    ("first", "|◀◀", "第一帧", "First frame"),
    ("prev", "◀|", "上一帧", "Previous frame"),
    ("play", "▶", "播放", "Play"),
    ("pause", "||", "暂停", "Pause"),
    ("next", "|▶", "下一帧", "Next frame"),
    ("last", "▶▶|", "最后一帧", "Last frame"),
)

_PLAYER_JS = """
(function () {
  if (window.courseFramePlayer) { window.courseFramePlayer(document.currentScript.previousElementSibling); return; }
  window.courseFramePlayer = function (box) {
    if (!box || box.dataset.ready) return;
    box.dataset.ready = "1";
    var frames = (box.getAttribute("data-frames") || "").split(/\\s+/).filter(Boolean);
    var img = box.querySelector("img.anim-frame"), slider = box.querySelector("input.anim-slider");
    var interval = parseInt(box.getAttribute("data-interval") || "500", 10), timer = null, loaded = null;
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

    def __init__(self, frames: list[bytes], interval_ms: int, alt: str) -> None:
        if not frames:
            raise ValueError("动画至少需要一帧")
        self.frames = frames
        self.interval_ms = int(interval_ms)
        self.alt = alt

    def _repr_html_(self) -> str:
        uris = [data_uri(f) for f in self.frames]
        last = len(uris) - 1
        alt = html.escape(self.alt, quote=True)
        buttons = "".join(
            f'<button type="button" data-action="{action}" title="{title}" aria-label="{label}">{text}</button>'
            for action, text, label, title in _BUTTONS
        )
        ident = uuid.uuid4().hex[:12]
        return (
            f"<style>{_CSS}</style>"
            f'<div class="animation course-anim" id="anim-{ident}" data-interval="{self.interval_ms}" '
            f'data-alt="{alt}" data-frames="{" ".join(uris)}">'
            f'<img class="anim-frame" src="{uris[0]}" alt="{alt}（第 1 / {last + 1} 帧）" decoding="async">'
            f'<div class="anim-controls"><input type="range" class="anim-slider" min="0" max="{last}" step="1" value="0" '
            f'aria-label="{alt}：选择帧">'
            f'<div class="anim-buttons">{buttons}</div></div></div>'
            f"<script>{_PLAYER_JS}</script>"
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
    interval = getattr(anim, "_interval", 500)
    return FramePlayer(frames, int(np.clip(interval, 50, 5000)), alt)
