"""The reference's documentation is complete and its examples run.

Every public function has the numpydoc sections Parameters, Returns, Raises, See Also (naming
the scikit-learn counterpart or saying there is none), Notes (with a formula), References and
Examples; every example in the package is executed here as a doctest.
"""

import doctest
import importlib
import inspect
import re

import pytest

import autograder.reference as ref

MODULES = ["_validation", "threshold_metrics", "ranking", "probability", "decision", "intervals"]
SECTIONS = ["Parameters", "Returns", "Raises", "See Also", "Notes", "References", "Examples"]
PUBLIC_FUNCTIONS = [name for name in ref.__all__ if inspect.isfunction(getattr(ref, name))]


@pytest.mark.parametrize("module", MODULES)
def test_doctests_pass(module):
    mod = importlib.import_module(f"autograder.reference.{module}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(mod, mod.__name__)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{module} has no examples"
    assert result.failed == 0, f"{result.failed} doctest example(s) of {module} failed (run pytest --doctest-modules {mod.__file__})"


def _sections(doc: str) -> list[str]:
    return re.findall(r"^\s*(\w[\w ]*)\n\s*-{3,}\s*$", doc, flags=re.M)


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_public_function_fully_documented(name):
    doc = inspect.getdoc(getattr(ref, name))
    sections = _sections(doc)
    assert sections == SECTIONS, f"{name}: sections {sections}, expected {SECTIONS}"
    see_also = doc.split("See Also")[1].split("Notes")[0]
    assert "sklearn." in see_also or "scikit-learn" in see_also, f"{name}: See Also must name the scikit-learn counterpart"
    notes = doc.split("\nNotes")[1].split("\nReferences")[0]
    assert ".. math::" in notes, f"{name}: Notes must state the formula"
    assert ".. [1]" in doc.split("\nReferences")[1], f"{name}: References must cite a source"
    assert ">>> from autograder.reference import" in doc, f"{name}: the example imports from the public package"


def test_every_public_name_is_documented_in_its_module():
    for name in ref.__all__:
        assert inspect.getdoc(getattr(ref, name)), name
