"""Progress on stderr: done/total, throughput and the estimated time left."""

from __future__ import annotations

import time
from typing import Callable


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """One line per finished submission: ``[k/N] text · R 份/分钟 · 已用 m:ss · 预计剩余 m:ss``."""

    def __init__(self, total: int, log: Callable[[str], None], start: float | None = None) -> None:
        self.total = total
        self.done = 0
        self.log = log
        self.t0 = time.monotonic() if start is None else start  # start: when the first job was started

    def rate(self) -> float:
        """Submissions per minute so far."""
        elapsed = time.monotonic() - self.t0
        return 60.0 * self.done / elapsed if elapsed > 0 else 0.0

    def tick(self, text: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.t0
        rate = self.rate()
        left = (self.total - self.done) / rate * 60.0 if rate > 0 else 0.0
        self.log(f"[{self.done}/{self.total}] {text} · {rate:.1f} 份/分钟 · 已用 {_clock(elapsed)} · 预计剩余 {_clock(left)}")
