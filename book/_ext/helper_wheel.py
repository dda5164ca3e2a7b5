"""The course's helper code as one wheel, installable in one line by a downloaded notebook.

The pages compute with the course's reference metrics (``autograder.reference``, pure NumPy) and draw with
its figure style and animation player (``coursebook``).  A page's downloaded notebook keeps that code as it
is (it is what the page teaches with), and its first code cell installs this wheel from the published book::

    %pip install -q https://course.example.edu/binary-eval/_downloads/course/binary_eval_course-0.1.0+3f2a9c1d0b-py3-none-any.whl

The wheel holds ``coursebook``'s figure style, curves, animation, experiment helpers and
:mod:`coursebook.notebook`, and ``autograder/__init__.py``; no grading engine, no book build.  The reference
metrics implement every graded function of the assignments, so only the instructor edition's wheel carries
their source (``reference=True``); the public wheel carries in their place a package whose every name
raises an ImportError saying why (:data:`PUBLIC_REFERENCE`), and a download keeps the outputs the book computed.
Its requirements are public packages.  Its version carries a hash of its files, so a reader who installed
an older one gets the new one.  A wheel is a zip file with three metadata files (PEP 427); it is written
here directly, with no build tool.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "binary_eval_course"
#: Files of every wheel: path inside the wheel -> path in the repository.
MODULES = {
    "autograder/__init__.py": "autograder/__init__.py",
    **{f"coursebook/{name}.py": f"book/coursebook/{name}.py"
       for name in ("__init__", "style", "curves", "animation", "experiments", "notebook")},
}
#: The reference metrics' files, in the instructor edition's wheel only (they are the assignments' answers).
REFERENCE_MODULES = {f"autograder/reference/{p.name}": f"autograder/reference/{p.name}"
                     for p in sorted((ROOT / "autograder" / "reference").glob("*.py"))}
#: ``autograder/reference/__init__.py`` of the public wheel: it imports, so a cell that uses only the figure
#: style still runs; using any of its names raises an ImportError that says what is missing and why.
PUBLIC_REFERENCE = '''"""Not part of the public course: the reference metrics implement the graded assignments."""

MESSAGE = ("公开课程不附带课程的参考实现 autograder.reference：它实现了编程作业要评分的每一个函数，也就是作业的答案。"
           "这个笔记本保存了课本运行时得到的输出；要重新运行用到它的单元，请换成你在作业中自己写的实现。")


class ReferenceNotPublished(ImportError):
    """A name of the reference metrics was used where the public course does not carry them."""


def __getattr__(name):
    if name.startswith(("__", "_ipython", "_repr_")):  # asked by Python and IPython of any module
        raise AttributeError(name)
    raise ReferenceNotPublished(f"{name}：{MESSAGE}")
'''
REQUIRES = ("numpy>=2", "matplotlib", "pillow", "mplfonts", "ipython")
SUMMARY = "Helper code of the course 评价二分类模型: figure style, animations (and, for instructors, reference metrics)"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def _version(files: dict[str, bytes]) -> str:
    from autograder import __version__

    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    return f"{__version__}+{digest.hexdigest()[:10]}"


def build_wheel(out_dir: Path, *, reference: bool = False) -> Path:
    """Write the wheel into ``out_dir`` (unless the same one is there) and return its path.

    Parameters
    ----------
    out_dir : Path
        The folder the published book offers the wheel from.
    reference : bool
        Whether the wheel carries the reference metrics' source (the instructor edition) or, as the public
        edition must, the package of :data:`PUBLIC_REFERENCE` in their place.
    """
    files = {name: (ROOT / source).read_bytes() for name, source in MODULES.items()}
    if reference:
        files.update({name: (ROOT / source).read_bytes() for name, source in REFERENCE_MODULES.items()})
    else:
        files["autograder/reference/__init__.py"] = PUBLIC_REFERENCE.encode("utf-8")
    version = _version(files)
    target = out_dir / f"{DISTRIBUTION}-{version}-py3-none-any.whl"
    if target.is_file():
        return target
    info = f"{DISTRIBUTION}-{version}.dist-info"
    files[f"{info}/METADATA"] = "\n".join(
        ["Metadata-Version: 2.1", f"Name: {DISTRIBUTION}", f"Version: {version}", f"Summary: {SUMMARY}",
         "Requires-Python: >=3.10", *(f"Requires-Dist: {r}" for r in REQUIRES), ""]).encode("utf-8")
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: book/_ext/helper_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{name},{_record_hash(data)},{len(data)}" for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob(f"{DISTRIBUTION}-*.whl"):
        old.unlink()
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # fixed: the same files give the same wheel
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED)
    partial.replace(target)
    return target
