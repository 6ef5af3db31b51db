#!/usr/bin/env bash
# `make env` (gitfilter): the clone strips notebook outputs on `git add` and in `git diff`.
#
# .gitattributes (committed) routes notebooks/**/*.ipynb through the filter "nbstripout" and the diff
# driver "ipynb"; this script defines both in the clone's .git/config with the venv's nbstripout:
# outputs, execution counts, widget state and the kernel's language_info details are stripped, cell
# ids kept (JupyterLab keeps them; renumbering would rewrite every committed chapter).  A chapter run
# and saved in JupyterLab then leaves `git status` clean.  results/executed/ is not filtered: those
# executed copies are what the book renders.  Usage: scripts/git_filter.sh PYTHON (run in the clone).
set -euo pipefail
python="${1:?usage: scripts/git_filter.sh PYTHON}"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git clone: no notebook filter"; exit 0; }
keys="metadata.language_info.codemirror_mode metadata.language_info.file_extension"
keys="$keys metadata.language_info.mimetype metadata.language_info.nbconvert_exporter"
keys="$keys metadata.language_info.pygments_lexer metadata.language_info.version"
strip="'$python' -m nbstripout --keep-id --extra-keys '$keys'"
git config filter.nbstripout.clean "$strip"
git config filter.nbstripout.smudge cat
git config filter.nbstripout.required true
git config diff.ipynb.textconv "$strip -t"
