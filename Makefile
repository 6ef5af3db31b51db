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
JOBS  ?= 1
PYTEST_ARGS ?=
QUICK_FLAG := $(if $(filter 1 true True yes,$(QUICK)),--quick,)

.PHONY: env reproduce report test clean help
.DEFAULT_GOAL := help

help:
	@echo "make reproduce [QUICK=1] [JOBS=N]  execute every notebook, write build/report.{md,html}"
	@echo "                                   (full mode: also results/, figures/ and REPORT.md)"
	@echo "make report                        render REPORT.md, the claims register, from results/"
	@echo "make test                          run the whole test suite (notebooks in quick mode)"
	@echo "make env                           create .venv, install fldp[dev], register kernel 'fldp'"
	@echo "make clean                         remove build/"

env: $(STAMP) $(KERNEL)

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

report: env
	$(BIN)/fldp report

test: env
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf build
