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
SOLUTIONS ?=
SOLUTIONS_FLAG := $(if $(filter 1 true True yes,$(SOLUTIONS)),--solutions,)

PORT  ?= 8866
LAB_PORT ?= 8888
BOOK_PORT ?= 8000

.PHONY: env system reproduce plan report test book book-serve exercises lab explore clean help
.DEFAULT_GOAL := help

help:
	@echo "make reproduce [QUICK=1] [JOBS=N]  execute every notebook (JOBS: workers, default all cores),"
	@echo "                                   write build/report.{md,html}"
	@echo "                                   (full mode: also results/ with results/executed/, the book's"
	@echo "                                   chapters, figures/ and REPORT.md)"
	@echo "make plan [QUICK=1] [JOBS=N]       what make reproduce would run: per notebook the runs, how many"
	@echo "                                   the run store holds, the predicted time (it prints this first too)"
	@echo "make report                        render REPORT.md, the claims register, from results/"
	@echo "make test                          run the whole test suite (notebooks in quick mode)"
	@echo "make book                          the static book from the committed results -> build/book/"
	@echo "make book-serve                    build it, then serve it on 127.0.0.1:BOOK_PORT (8000)"
	@echo "make exercises [SOLUTIONS=1]       student exercises notebooks -> build/exercises/student/"
	@echo "                                   (SOLUTIONS=1: run the masters -> build/exercises/solutions/)"
	@echo "make lab                           JupyterLab on the notebooks, kernel 'fldp' (LAB_PORT=8888)"
	@echo "make explore                       serve notebooks/explore.ipynb with Voila on 127.0.0.1:PORT (8866)"
	@echo "make env                           create .venv, install fldp[dev], register kernel 'fldp'"
	@echo "make system                        Debian's chromium and npm (browser tests, the book's JavaScript)"
	@echo "make clean                         remove build/"

env: $(STAMP) $(KERNEL) system

# System packages: Debian's Chromium (and a font) for the browser tests, and npm, which fetches the
# book's JavaScript once (pinned, checked).  Installed with apt-get where we are root and one is
# missing; otherwise a message says what is missing (the browser tests then skip, except under
# CI=true, where they fail).
SYSTEM_PKGS := chromium fonts-dejavu-core npm
system:
	@if command -v chromium >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's $(SYSTEM_PKGS) (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    $(SYSTEM_PKGS) >/dev/null \
	  || echo "WARNING: apt-get could not install $(SYSTEM_PKGS): the browser tests and make book may fail"; \
	else \
	  echo "NOTE: chromium or npm is missing and this is not a root shell with apt-get: install Debian's"; \
	  echo "      'chromium' and 'npm' packages (sudo apt-get install chromium npm) for the browser tests and the book"; \
	fi

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -e '.[dev]'
	$(BIN)/python -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__)"
	@rm -f $(VENV)/.stamp-*
	@touch $@

$(KERNEL): $(STAMP)
	$(BIN)/python -m ipykernel install --sys-prefix --name fldp --display-name "Python (fldp)"
	@touch $@

# A full run also re-renders REPORT.md from results/, even when a notebook failed (the others'
# results were updated); the exit status is still the reproduce's.
reproduce: env
	@status=0; $(BIN)/fldp reproduce $(QUICK_FLAG) --jobs $(JOBS) || status=$$?; \
	$(if $(QUICK_FLAG),,$(BIN)/fldp report || status=1;) exit $$status

plan: env
	@$(BIN)/fldp reproduce --plan $(QUICK_FLAG) --jobs $(JOBS)

report: env
	$(BIN)/fldp report

test: env
	$(BIN)/python -m pytest $(PYTEST_ARGS)

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
ROOT_FLAG = $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

lab: env
	$(BIN)/jupyter lab --notebook-dir=notebooks --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) $(ROOT_FLAG)

explore: env
	@echo "fldp explorers: open http://127.0.0.1:$(PORT)/ in a browser (Ctrl-C stops the server)"
	$(BIN)/voila notebooks/explore.ipynb --no-browser --Voila.ip=127.0.0.1 --port=$(PORT)

clean:
	rm -rf build
