"""pytest plugin for ``--nbval-lax`` runs of released notebooks: keep only the cells before the first
answer cell (an nbgrader ``solution`` cell, which raises ``NotImplementedError`` until a student writes it)."""

from __future__ import annotations


def pytest_collection_modifyitems(config, items):
    first_answer: dict[str, int] = {}
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            path = str(item.fspath)
            first_answer[path] = min(first_answer.get(path, item.cell_num), item.cell_num)
    keep, drop = [], []
    for item in items:
        limit = first_answer.get(str(item.fspath))
        (drop if limit is not None and getattr(item, "cell_num", -1) >= limit else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
