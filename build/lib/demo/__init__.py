"""Interactive demo of the course (Shiny for Python): 二分类评价与超参数选择.

Start it with ``python -m demo`` (default http://127.0.0.1:8050).  The seeded
data live in :mod:`demo.data`, tab-1 numbers in :mod:`demo.views`, tab 2 in
:mod:`demo.workflow`, figures in :mod:`demo.plots` and the Shiny wiring in
:mod:`demo.app`.
"""
