"""Course tooling: the reference metrics (:mod:`autograder.reference`) and the grading engine."""

__version__ = "0.1.0"
