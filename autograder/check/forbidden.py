"""Forbidden-use scan: does a required function use the course's reference or scikit-learn?"""

from __future__ import annotations

import ast

FORBIDDEN_MODULES = ("autograder", "sklearn")


def forbidden_uses(cells: list[tuple[int, str]], functions: tuple[str, ...]) -> dict[str, str]:
    """Map each required function that uses ``autograder`` or scikit-learn to a Chinese explanation.

    Static check on the cells' syntax trees: an import of either package inside the
    function, a use of a name bound to either package at top level, a string naming
    either package (``importlib`` tricks), or a top-level binding of the function
    name to something imported from them.
    """
    tainted: set[str] = set()
    defs: dict[str, ast.AST] = {}
    direct: dict[str, str] = {}

    def bad_module(mod: str | None) -> bool:
        return bool(mod) and mod.split(".")[0] in FORBIDDEN_MODULES

    for _i, text in cells:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if bad_module(alias.name):
                        tainted.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, ast.ImportFrom) and bad_module(node.module):
                for alias in node.names:
                    tainted.add(alias.asname or alias.name)
                    if (alias.asname or alias.name) in functions:
                        direct[alias.asname or alias.name] = f"直接从 {node.module} 导入"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in functions:
                defs[node.name] = node
                direct.pop(node.name, None)
            elif isinstance(node, ast.Assign):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                for name in names & set(functions):
                    defs[name] = node
    result: dict[str, str] = dict(direct)
    for name, node in defs.items():
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import) and any(bad_module(a.name) for a in sub.names):
                result[name] = "在函数中导入了 " + ", ".join(a.name for a in sub.names)
            elif isinstance(sub, ast.ImportFrom) and bad_module(sub.module):
                result[name] = f"在函数中导入了 {sub.module}"
            elif isinstance(sub, ast.Name) and sub.id in tainted:
                result[name] = f"使用了从参考实现或 scikit-learn 导入的 {sub.id}"
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and any(m in sub.value for m in FORBIDDEN_MODULES):
                result[name] = f"代码中出现模块名字符串 {sub.value[:60]!r}"
    return result
