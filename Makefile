# The two commands of the README:
#   make serve   - set everything up, build the course and serve it on http://127.0.0.1:8000,
#                  with the interactive demo next to it on http://127.0.0.1:8050 and the submission
#                  service (a demo course, access codes printed) on http://127.0.0.1:8060, and a fake LMS
#                  on http://127.0.0.1:8070 that opens it over LTI 1.3 (README.md)
#   make test    - set everything up and run the whole test suite
PYTHON ?= python3
# Python keeps the bytecode of what it imports (__pycache__, git-ignored) even where the environment says not to
# (this machine sets PYTHONDONTWRITEBYTECODE=1): without it every process the targets start (pytest and its
# workers, each `autograder grade`/`serve`/`roster`, each sandbox's runner) compiled every module it imports
# from source again, ~2 s of CPU per process (measured: pytest's start 4.3 -> 2.1 s, a roster import 3.2 -> 1.1 s).
unexport PYTHONDONTWRITEBYTECODE
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BYTECODE := $(VENV)/.bytecode
AXE    := tests/a11y/node_modules/axe-core/axe.min.js
MATHJAX := book/_ext/mathjax_node/node_modules/mathjax-full/package.json
PROXY  := deploy/jupyterhub/node_modules/configurable-http-proxy/package.json
LAB_BUILDER := lab/node_modules/@jupyter/builder/package.json
LAB    := $(VENV)/.lab-installed
PORT   ?= 8000
HOST   ?= 127.0.0.1
DEMO_PORT ?= 8050
SUBMIT_PORT ?= 8060
LTI_PORT ?= 8070
# The addresses that the book, its PDF, the demo's 「← 回到课程」 and the feedback's book links name: a deployment
# setting (book/coursebook/deployment.py) that every target below builds or starts with.  Unless COURSE_SITE_CONFIG
# is given (a published build: docs/instructors/howto/publish.md), it is SERVE_SITE, written from HOST and the ports of this run, so
# `make serve PORT=9000 DEMO_PORT=9050 SUBMIT_PORT=9060` links to 9000/9050/9060 everywhere (the defaults give
# deploy/local.yml's addresses).  The submission service's address is its course's (the demo's first course,
# /c/bin-2026/), an opaque base: the book adds assignments/<name> to it.
SITE_URL ?= http://$(HOST):$(PORT)/
DEMO_URL ?= http://$(HOST):$(DEMO_PORT)/
SUBMIT_URL ?= http://$(HOST):$(SUBMIT_PORT)/c/bin-2026/
SERVE_SITE ?= _build/serve-site.yml
COURSE_SITE_CONFIG ?= $(abspath $(SERVE_SITE))
# the environment of every command below that builds or starts part of the course (the tests keep their own)
SITE_ENV := COURSE_SITE_CONFIG='$(COURSE_SITE_CONFIG)'
HUB_PORT ?= 8090
# HUB=1: a local JupyterHub beside the demo courses (docs/jupyterhub.md, "试用")
HUB    ?=
HUB_ARGS = $(if $(HUB),--hub-port $(HUB_PORT))

.PHONY: serve demo submit test test-fast test-durations lint setup setup-files system book book-instructor pdf pdf-instructor bench bench-pages freeze public clean site-config guide guide-screenshots

# The demo and the submission service (a throwaway demo course: three students and an instructor, their
# access codes printed below) run in the background and stop together with the book server (Ctrl-C).
# The site, the PDF, the demo and the feedback link to each other through the deployment setting (SERVE_SITE above:
# these addresses; see docs/instructors/howto/publish.md).
serve: book pdf
	@echo "课程已构建：http://$(HOST):$(PORT)/（指南：/guide/）  交互演示：http://$(HOST):$(DEMO_PORT)/  作业提交：http://$(HOST):$(SUBMIT_PORT)/  假课程平台（LTI）：http://$(HOST):$(LTI_PORT)/  （Ctrl-C 停止）"
	@$(SITE_ENV) $(BIN)/python -m demo --host $(HOST) --port $(DEMO_PORT) & demo_pid=$$!; \
	$(SITE_ENV) $(BIN)/python -m autograder.commands.demo_course --host $(HOST) --port $(SUBMIT_PORT) --lti-port $(LTI_PORT) --book-url $(SITE_URL) $(HUB_ARGS) & submit_pid=$$!; \
	trap 'kill $$demo_pid $$submit_pid 2>/dev/null; wait $$submit_pid 2>/dev/null' EXIT INT TERM; \
	$(BIN)/python -m http.server $(PORT) --bind $(HOST) --directory _build/html

# The deployment setting of this run (see SERVE_SITE above); rewritten only when an address changed, and left alone
# when COURSE_SITE_CONFIG names another file.
site-config:
ifeq ($(COURSE_SITE_CONFIG),$(abspath $(SERVE_SITE)))
	@mkdir -p $(dir $(SERVE_SITE))
	@printf '# Written by make from HOST and the ports (Makefile, SERVE_SITE); keys: book/coursebook/deployment.py\nsite_url: %s\ndemo_url: %s\nsubmit_url: %s\n' \
		'$(SITE_URL)' '$(DEMO_URL)' '$(SUBMIT_URL)' > $(SERVE_SITE).new
	@if cmp -s $(SERVE_SITE).new $(SERVE_SITE); then rm $(SERVE_SITE).new; else mv $(SERVE_SITE).new $(SERVE_SITE); fi
endif

# The interactive demo alone (Shiny for Python).
demo: setup site-config
	$(SITE_ENV) $(BIN)/python -m demo --host $(HOST) --port $(DEMO_PORT)

# The submission service alone, with the throwaway demo course (codes printed; removed on Ctrl-C); HUB=1 adds a
# local JupyterHub on HUB_PORT (any username, password demo).
submit: setup site-config
	$(SITE_ENV) $(BIN)/python -m autograder.commands.demo_course --host $(HOST) --port $(SUBMIT_PORT) --lti-port $(LTI_PORT) --book-url $(SITE_URL) $(HUB_ARGS)

# The whole suite on TEST_WORKERS pytest-xdist workers: test modules (or the groups of modules that declare
# shared fixtures with an xdist_group mark) as units, longest first by their measured seconds (tests/parallel_units.py).
TEST_WORKERS ?= 3
test: setup lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope

# Everything not marked slow (no sandbox, browser, book build, real server, PostgreSQL or Dask); under two minutes.
test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

# The whole suite, writing its measured seconds per module to tests/durations.json (the order a clean clone uses).
test-durations: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope --store-durations

lint: setup
	$(BIN)/ruff check .

# After the Debian packages (npm among them), Python's environment and the two npm installs are made side by side
# (-j3: the npm installs wait on the network and the disk while pip installs; ~4 s of a clean clone's set-up).
setup: system
	@$(MAKE) --no-print-directory -j3 setup-files

setup-files: $(STAMP) $(BYTECODE) $(AXE) $(MATHJAX) $(PROXY) $(LAB)

system:
	@bash scripts/install-system-deps.sh

# --no-compile: pip would byte-compile every file of every package one after the other (a third of the install's
# time on two cores); $(BYTECODE) below does it on every core instead.
# --no-deps: requirements.txt is the whole environment (pip freeze --all, wheel included: sphinx-togglebutton
# requires it; pip and setuptools come with the venv), installed as it stands.  Two packages an
# optional extra asks for are left out on purpose: rfc3987-syntax (with lark, its only user) is what
# jupyter-events' jsonschema[format-nongpl] pulls in to check "iri" strings, and it compiles 38 grammars each time
# jsonschema is imported: 0.8 of the 0.94 s of CPU that `import nbformat` costs, in every nbgrader command, grading
# process, service process and book build.  Nothing here checks that format (tests/test_environment.py).
# pip installs one package after the other on one core: two pips install the two halves side by side (no two
# packages here write the same file; the environment is the same file for file: 16 -> 10 s).
$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=24"
	grep '==' requirements.txt | awk 'NR % 2 == 1' > $(VENV)/.requirements-1.txt
	grep '==' requirements.txt | awk 'NR % 2 == 0' > $(VENV)/.requirements-2.txt
	$(BIN)/python -m pip install -q --no-compile --no-deps -r $(VENV)/.requirements-1.txt & first=$$!; \
	$(BIN)/python -m pip install -q --no-compile --no-deps -r $(VENV)/.requirements-2.txt && wait $$first
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

# Byte-compiled modules of everything installed and of autograder/ (about 20 s of CPU, once, on every core), except
# the packages' own test suites (a quarter of the files; nothing here imports them, and a writable environment
# compiles what it imports anyway).  Python writes a
# module's .pyc when it first imports it, except where it may not: with PYTHONDONTWRITEBYTECODE=1 in the
# environment (as on the course's shared machine) and inside every sandbox (read-only, and it sets that variable),
# every process compiled each module it imported, at every start: 1.0 of the grading command's 2.3 s of CPU for
# 30 submissions, NumPy in every zygote, nbgrader's modules in each of its kernels (docs/scaling.md, "Bytecode");
# importing scikit-learn, SciPy, matplotlib and IPython 4.7 s of CPU instead of 2.2 s in each book kernel and worker.
$(BYTECODE): $(STAMP) $(shell find autograder -name '*.py')
	$(BIN)/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib autograder > /dev/null
	touch $(BYTECODE)

# axe-core (pinned in tests/a11y/package.json) for the accessibility audit of the built book.
$(AXE): tests/a11y/package.json
	cd tests/a11y && npm install --no-package-lock --no-audit --no-fund --silent
	touch $(AXE)

# MathJax 3 in Node (pinned in book/_ext/mathjax_node/package.json): the book's formulas are typeset
# at build time by book/_ext/static_math.py.
$(MATHJAX): book/_ext/mathjax_node/package.json
	cd book/_ext/mathjax_node && npm install --no-package-lock --no-audit --no-fund --silent
	touch $(MATHJAX)

# configurable-http-proxy (pinned in deploy/jupyterhub/package.json): the proxy of the local JupyterHub that
# `make serve HUB=1` and tests/service/hub/ start (a production hub brings its own).
$(PROXY): deploy/jupyterhub/package.json
	cd deploy/jupyterhub && npm install --no-package-lock --no-audit --no-fund --silent
	touch $(PROXY)

# 提交 in JupyterLab (lab/): the JupyterLab extension is built with @jupyter/builder (pinned in lab/package.json;
# the @jupyterlab packages it uses are JupyterLab's own at run time, so they are not installed: --legacy-peer-deps),
# then the Python package - server extension, prebuilt labextension and the server config enabling it - is
# installed as a hub's user environment installs it.
$(LAB_BUILDER): lab/package.json
	cd lab && npm install --no-package-lock --legacy-peer-deps --no-audit --no-fund --silent
	touch $(LAB_BUILDER)

$(LAB): $(STAMP) $(LAB_BUILDER) lab/pyproject.toml lab/src/index.js lab/schema/plugin.json lab/jupyter-config/autograder_lab.json $(wildcard lab/autograder_lab/*.py)
	$(BIN)/jupyter-builder build lab > /dev/null
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation ./lab
	rm -rf lab/build lab/autograder_lab.egg-info
	touch $(LAB)

# Public build into _build/html, with the guides in _build/html/guide (the book links to them).  Unchanged pages come
# from the execution cache (_build/.jupyter_cache).
# (coursebook.book_build: jupyter-book build, whose closing note about file:// addresses is replaced by make serve's)
book: setup site-config
	$(SITE_ENV) $(BIN)/python -m coursebook.book_build --warningiserror --nitpick --keep-going
	@$(MAKE) --no-print-directory guide

# The instructors' and maintainers' guides (docs/, Sphinx) into the site's folder guide/ (coursebook.deployment's
# GUIDE_FOLDER): warnings are errors, references nitpicky, searchable in Chinese like the book.
guide: setup site-config
	$(SITE_ENV) $(BIN)/python -m sphinx -W --keep-going -n -q -b html -d _build/guide-doctrees docs _build/html/guide
	@echo "指南：_build/html/guide/index.html"

# The screenshots of the tutorial (docs/_static/tutorial/, taken by its test as it follows the page in chromium) and of
# the README (docs/_static/readme/, the built book).
guide-screenshots: setup
	GUIDE_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/docs/test_tutorial.py tests/docs/test_readme.py

# Instructor build (adds the {instructor-only} blocks, e.g. solutions of 综合练习 5-7) into
# _build/instructor/_build/html; shares the execution cache with the public build.
book-instructor: setup site-config
	$(SITE_ENV) COURSE_INSTRUCTOR=1 $(BIN)/python -m coursebook.book_build --path-output _build/instructor --warningiserror --nitpick --keep-going
	@echo "教师版：_build/instructor/_build/html/index.html"

# PDF edition (single-page build printed by Debian's chromium): _build/pdf/course.pdf, copied into the site.
pdf: setup site-config
	$(SITE_ENV) $(BIN)/python -m coursebook.pdf

# Instructor PDF edition: _build/pdf/course-instructor.pdf (and into the instructor site, if built).
pdf-instructor: setup site-config
	$(SITE_ENV) $(BIN)/python -m coursebook.pdf --instructor

# The student-facing course, exported and checked for answers, hidden tests and instructor-only content:
# _build/public/{site,course.pdf,notebooks,repository} (autograder export-public; docs/public-private.md).
public: book pdf
	rm -rf _build/public
	$(BIN)/autograder export-public _build/public

bench: setup
	$(BIN)/python bench/bench_ranking.py

# Page weight and speed of every page (Lighthouse, mobile profile, Debian's chromium); needs `make book`.
# Lighthouse is pinned in bench/package.json and installed into bench/node_modules (npm, no lock file).
bench-pages: setup
	test -d bench/node_modules/lighthouse || npm install --prefix bench --no-package-lock --no-audit --no-fund
	$(BIN)/python bench/bench_pages.py --all

freeze:
	$(BIN)/python -m pip freeze --all --exclude-editable | grep -v -e '^autograder' -e '^pip==' -e '^setuptools==' > requirements.txt.new
	{ echo "# Exact versions tested on Python 3.11 (generated by 'pip freeze'; regenerate with 'make freeze')."; cat requirements.txt.new; } > requirements.txt
	rm requirements.txt.new

clean:
	rm -rf _build
