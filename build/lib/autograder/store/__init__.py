"""The only writers of the gradebook and of the output folder.

* :mod:`.ledger` - :class:`Store`: the nbgrader gradebook and the exactly-once ledger, one transaction
  per submission, with the retry policy for a database that is briefly away;
* :mod:`.gradebook` - what goes through nbgrader (generate_assignment, scores, CSV export);
* :mod:`.outputs` - :class:`OutputFolder`: results, feedback pages, summary, run statistics (atomic);
* :mod:`.report` - the feedback and summary pages (Jinja2 templates with autoescape) and the comment.

This layer knows the result types (:mod:`autograder.model`) and nothing of how results are produced.
Import the submodules directly: :mod:`.ledger` imports nbgrader (~1.5 s), which the grading command
does only after its workers have started.
"""
