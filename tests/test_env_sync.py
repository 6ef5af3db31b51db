"""pyproject.toml and environment.yml must list the same packages."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONDA_ONLY = {"python", "pip"}  # the interpreter and installer, not project dependencies


def normalise(requirement: str) -> str | None:
    """Package name of a requirement (lowercase, ``_``/``.`` -> ``-``), without extras,
    versions or markers; ``None`` for pip options such as ``-e .``."""
    requirement = requirement.strip()
    if not requirement or requirement.startswith("-"):
        return None
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, f"cannot read a package name from {requirement!r}"
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def pyproject_packages(text: str) -> set[str]:
    """Dependencies plus every optional extra."""
    project = tomllib.loads(text)["project"]
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return {n for n in map(normalise, reqs) if n}


def environment_packages(text: str) -> set[str]:
    """Package names from an environment.yml: ``dependencies`` items and its ``pip:`` list.

    A tiny parser for the simple structure conda uses (no PyYAML needed)."""
    names: set[str] = set()
    in_deps = False
    deps_indent = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_deps = line.startswith("dependencies:")
            continue
        if not in_deps or not line.lstrip().startswith("- "):
            continue
        item = line.lstrip()[2:].strip().strip("'\"")
        if deps_indent is None:
            deps_indent = indent
        if item == "pip:":
            continue
        name = normalise(re.split(r"[=<>!~ ]", item, maxsplit=1)[0])
        if name and not (indent == deps_indent and name in CONDA_ONLY):
            names.add(name)
    return names


def drift(pyproject_text: str, environment_text: str) -> tuple[set[str], set[str]]:
    """(only in pyproject.toml, only in environment.yml)."""
    a, b = pyproject_packages(pyproject_text), environment_packages(environment_text)
    return a - b, b - a


def test_pyproject_and_environment_list_the_same_packages():
    only_pyproject, only_environment = drift((ROOT / "pyproject.toml").read_text(),
                                             (ROOT / "environment.yml").read_text())
    assert not only_pyproject and not only_environment, (
        f"only in pyproject.toml: {sorted(only_pyproject)}; "
        f"only in environment.yml: {sorted(only_environment)}")


def test_both_files_list_the_core_packages():
    expected = {"torch", "torchvision", "numpy", "scipy", "matplotlib", "papermill",
                "ipykernel", "ipywidgets", "nbformat", "nbclient", "nbconvert", "tqdm",
                "dp-accounting", "pytest"}
    assert expected <= pyproject_packages((ROOT / "pyproject.toml").read_text())
    assert expected <= environment_packages((ROOT / "environment.yml").read_text())


PYPROJECT = """
[project]
name = "x"
dependencies = ["torch>=2.2", "Dp_Accounting>=0.4", "numpy", "scipy[extra]==1.0; python_version>'3'"]
[project.optional-dependencies]
dev = ["pytest>=7"]
"""

ENVIRONMENT = """
name: x
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - numpy>=1.24   # a comment
  - "scipy =1.0"
  - pytest
  - pip:
      - torch>=2.2
      - dp_accounting
      - -e .
"""


def test_parser_reads_the_simple_yaml_structure():
    assert environment_packages(ENVIRONMENT) == {"numpy", "scipy", "pytest", "torch",
                                                 "dp-accounting"}
    assert pyproject_packages(PYPROJECT) == {"torch", "dp-accounting", "numpy", "scipy",
                                             "pytest"}


def test_in_sync_example_has_no_drift():
    assert drift(PYPROJECT, ENVIRONMENT) == (set(), set())


@pytest.mark.parametrize("edit, expected", [
    (lambda e: e.replace('"scipy =1.0"', "scikit-learn"),
     ({"scipy"}, {"scikit-learn"})),
    (lambda e: e.replace("      - torch>=2.2\n", ""), ({"torch"}, set())),
    (lambda e: e + "  - tqdm\n", (set(), {"tqdm"})),
])
def test_drift_is_detected(edit, expected):
    assert drift(PYPROJECT, edit(ENVIRONMENT)) == expected


def test_the_run_store_is_never_committed():
    """results/runs/ is a local cache (fldp.repro.store): a tracked file or link there would replace a
    clone's store on checkout (git overwrites ignored paths)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    tracked = subprocess.run(["git", "ls-files", "results/runs"], cwd=root, capture_output=True, text=True).stdout
    assert tracked == "", f"tracked under results/runs: {tracked.split()}"


def _constraints() -> dict:
    pins = {}
    for raw in (ROOT / "constraints.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {raw!r} is not an exact pin (NAME==VERSION)"
            pins[name.strip().lower()] = version.strip()
    return pins


def test_the_constraints_pin_the_libraries_whose_numerics_decide_the_archive():
    """constraints.txt pins exactly fldp.repro.archive.LIBRARIES (and torchvision, torch's pair),
    each a dependency of pyproject.toml, and make env installs with it."""
    from fldp.repro.archive import LIBRARIES

    pins = _constraints()
    assert set(pins) == set(LIBRARIES) | {"torchvision"}
    assert set(pins) <= pyproject_packages((ROOT / "pyproject.toml").read_text())
    assert "pip install -c constraints.txt" in (ROOT / "Makefile").read_text()


def test_this_environment_is_the_pinned_one():
    """The environment the tests run in is the one constraints.txt pins (make env installs it), so
    fldp store verify in CI recomputes the archived runs under the libraries that computed them."""
    from importlib import metadata

    pins = _constraints()
    installed = {name: metadata.version(name).split("+")[0] for name in pins}
    assert installed == pins, f"installed {installed}, constraints.txt {pins}: run make env"


def test_make_reproduce_ends_with_the_register_and_the_comparison_in_full_mode_only():
    """A full `make reproduce` re-renders REPORT.md and says which results differ from the committed
    ones (informative: `|| true`); a quick one does neither (its results are not the committed ones)."""
    import subprocess

    def recipe(*extra):
        done = subprocess.run(["make", "-n", "reproduce", "JOBS=2", *extra], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    full, quick = recipe(), recipe("QUICK=1")
    assert "fldp report || status=1;" in full and "fldp compare || true; exit $status" in full
    assert "fldp compare" not in quick and "fldp report" not in quick and "--quick" in quick
