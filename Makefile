# Two commands:  `make reproduce` (QUICK=1 for CI size)  and  `make test`.
# Both set up the environment first (`make env`), once per version of pyproject.toml.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Re-install only when pyproject.toml changes.
HASH   := $(shell $(PYTHON) -c "import hashlib;print(hashlib.sha256(open('pyproject.toml','rb').read()).hexdigest()[:12])")
STAMP  := $(VENV)/.stamp-$(HASH)
KERNEL := $(VENV)/share/jupyter/kernels/fldp/kernel.json

QUICK ?=
# Workers: notebooks run JOBS at a time and share one pool of JOBS single-threaded workers for their
# runs (every computation is single-threaded, so the numbers do not depend on JOBS): all cores.
JOBS  ?= $(shell nproc 2>/dev/null || echo 1)
PYTEST_ARGS ?=
QUICK_FLAG := $(if $(filter 1 true True yes,$(QUICK)),--quick,)
FRESH ?=
FRESH_FLAG := $(if $(filter 1 true True yes,$(FRESH)),--fresh,)
SOLUTIONS ?=
SOLUTIONS_FLAG := $(if $(filter 1 true True yes,$(SOLUTIONS)),--solutions,)

PORT  ?= 8866
LAB_PORT ?= 8888
BOOK_PORT ?= 8000

.PHONY: env system gitfilter reproduce plan report test test-fast book book-serve exercises lab explore clean help
.DEFAULT_GOAL := help

help:
	@echo "make reproduce [QUICK=1] [JOBS=N]  execute every notebook (JOBS: workers, default all cores; FRESH=1:"
	@echo "                                   recompute every run instead of reading the store and the run archive),"
	@echo "                                   write build/report.{md,html}"
	@echo "                                   (full mode: also results/ with results/executed/, the book's"
	@echo "                                   chapters, figures/ and REPORT.md)"
	@echo "make plan [QUICK=1] [JOBS=N]       what make reproduce would run: per notebook the runs, how many"
	@echo "                                   the run store holds, the predicted time (it prints this first too)"
	@echo "make report                        render REPORT.md, the claims register, from results/"
	@echo "make test                          run the whole test suite (notebooks in quick mode)"
	@echo "make test-fast                     the inner loop: no notebooks, browser or slow tests (2 workers)"
	@echo "make book                          the static book from the committed results -> build/book/"
	@echo "make book-serve                    build it, then serve it on 127.0.0.1:BOOK_PORT (8000)"
	@echo "make exercises [SOLUTIONS=1]       student exercises notebooks -> build/exercises/student/"
	@echo "                                   (SOLUTIONS=1: run the masters -> build/exercises/solutions/)"
	@echo "make lab                           JupyterLab on the notebooks, kernel 'fldp' (LAB_PORT=8888)"
	@echo "make explore                       serve notebooks/explore.ipynb with Voila on 127.0.0.1:PORT (8866)"
	@echo "make env                           create .venv, install fldp[dev], register kernel 'fldp'"
	@echo "make system                        Debian's chromium, npm and a font, where missing (browser tests, the book)"
	@echo "make clean                         remove build/"

env: $(STAMP) $(KERNEL) system gitfilter

# The clone strips notebook outputs on `git add` / `git diff` (nbstripout; .gitattributes names notebooks/).
gitfilter: $(STAMP)
	@bash scripts/git_filter.sh "$(abspath $(BIN))/python"

# System packages (scripts/system_packages.sh): Debian's Chromium for the browser tests, npm (which
# fetches the book's JavaScript once; only when there is no npm at all) and a font, each installed
# with its own apt-get call, only when missing and where we are root; otherwise a message says what
# to install.  Under CI=true a missing browser is an error here, not 18 minutes later in pytest.
system:
	@bash scripts/system_packages.sh

# constraints.txt pins the libraries whose numerics decide the archived runs' exact numbers.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -c constraints.txt -e '.[dev]'
	$(BIN)/python -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
	@rm -f $(VENV)/.stamp-*
	@touch $@

$(KERNEL): $(STAMP)
	$(BIN)/python -m ipykernel install --sys-prefix --name fldp --display-name "Python (fldp)"
	@touch $@

# A full run also re-renders REPORT.md from results/, even when a notebook failed (the others'
# results were updated), and says which results differ from the committed ones (fldp compare,
# wall clock and run usage aside; informative: the exit status is still the reproduce's).
reproduce: env
	@status=0; $(BIN)/fldp reproduce $(QUICK_FLAG) $(FRESH_FLAG) --jobs $(JOBS) || status=$$?; \
	$(if $(QUICK_FLAG),,$(BIN)/fldp report || status=1; $(BIN)/fldp compare || true;) exit $$status

plan: env
	@$(BIN)/fldp reproduce --plan $(QUICK_FLAG) $(FRESH_FLAG) --jobs $(JOBS)

report: env
	$(BIN)/fldp report

# Two pytest-xdist workers, one test file each at a time (--dist loadfile keeps a file's tests in
# order on one worker: the notebooks' later chapters read earlier ones' results); TEST_JOBS=0 runs
# them in this process.  32 min serial, 21 min so on this 2-core machine (2026-11-28).
TEST_JOBS ?= 2
test: env
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile $(PYTEST_ARGS)

# The inner loop while coding: no notebooks, no browser, none of the slow tests (Sphinx builds,
# papermill runs, the cost calibration, the reproduction's worker pool); `make test` runs them all.
test-fast: env
	$(BIN)/python -m pytest -m "not notebooks and not browser and not slow" -n 2 $(PYTEST_ARGS)

# The static book (Sphinx + MyST-NB) of the committed full-mode results: trains and executes nothing.
book: env
	$(BIN)/fldp book

book-serve: book
	$(BIN)/fldp book --no-build --port $(BOOK_PORT)

# The exercises notebooks without their solutions, for students (SOLUTIONS=1: the masters executed,
# every check must report "correct").
exercises: env
	$(BIN)/fldp exercises $(SOLUTIONS_FLAG)

# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
# scripts/jupyter/jupyter_server_config.py: a chapter run and saved leaves `git status` clean.
ROOT_FLAG = $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

lab: env
	JUPYTER_CONFIG_PATH=$(CURDIR)/scripts/jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH} $(BIN)/jupyter lab --notebook-dir=notebooks --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) $(ROOT_FLAG)

explore: env
	@echo "fldp explorers: open http://127.0.0.1:$(PORT)/ in a browser (Ctrl-C stops the server)"
	@bash scripts/explore.sh $(BIN)/python $(PORT)

clean:
	rm -rf build
