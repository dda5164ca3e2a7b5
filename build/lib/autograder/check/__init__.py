"""Trusted grading of one notebook.  Runs in the grader's process; student code only ever runs in the sandbox.

* :mod:`.specs` - the assignments: student functions, cases, grade cells and points (hidden tests);
* :mod:`.prepare` - which cells run (answer cells from the student, locked cells from the source),
  transformed by IPython's input transformer, top-level imports of modules the grading environment
  does not provide skipped (a function that uses them fails its cases with that reason);
* :mod:`.expected` - expected values from :mod:`autograder.reference`;
* :mod:`.compare` - strict comparison of a decoded student value with the expected one;
* :mod:`.render` - values, calls and exceptions as feedback text;
* :mod:`.cases` - one case: call in the sandbox, judge here;
* :mod:`.mutants`, :mod:`.mutant_runs` - assignment 5's planted implementations and their runs;
* :mod:`.grade` - :func:`grade_notebook`, all of the above for one submission.
"""

from .grade import grade_notebook, grade_with_timing
from .specs import Assignment, Case, all_assignments, get_assignment

__all__ = ["grade_notebook", "grade_with_timing", "Assignment", "Case", "all_assignments", "get_assignment"]
