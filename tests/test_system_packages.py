"""`make system` (scripts/system_packages.sh) asks apt-get for exactly the missing packages.

No root and no network: the script runs with a PATH that holds only fakes: `id` (root or not),
`apt-get` (records its calls, may refuse a package with apt-get's own words, and "installs" a
package by putting a fake command in place), and `chromium` / `npm` where the case has them.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "system_packages.sh"
BASH = shutil.which("bash")

FAKE_APT = r"""#!{bash}
echo "$*" >> "{log}"
[ "$1" = update ] && exit 0
pkg="${{@: -1}}"
if [ "$pkg" = "$FAKE_APT_REFUSE" ]; then
    echo "Some packages could not be installed."
    echo " nodejs : Conflicts: npm"
    echo "E: Unable to correct problems, you have held broken packages."
    exit 100
fi
case "$pkg" in
    chromium|npm) printf '#!{bash}\nexit 0\n' > "{bin}/$pkg"; chmod +x "{bin}/$pkg" ;;
    fonts-dejavu-core) : > "$FLDP_DEJAVU_FONT" ;;
esac
exit 0
"""


def run_system(tmp_path: Path, *, have: tuple[str, ...], font: bool = True, root: bool = True,
               refuse: str = "", ci: str = "") -> tuple[subprocess.CompletedProcess, list[str]]:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "apt.log"
    fonts = tmp_path / "DejaVuSans.ttf"
    if font:
        fonts.write_text("")

    def fake(name: str, body: str) -> None:
        (bin_ / name).write_text(body)
        (bin_ / name).chmod(0o755)

    fake("id", f"#!{BASH}\necho {0 if root else 1000}\n")
    fake("apt-get", FAKE_APT.format(bash=BASH, log=log, bin=bin_))
    for cmd in have:
        fake(cmd, f"#!{BASH}\nexit 0\n")
    env = {"PATH": str(bin_), "FLDP_DEJAVU_FONT": str(fonts), "FAKE_APT_REFUSE": refuse, "CI": ci}
    done = subprocess.run([BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)
    calls = log.read_text().splitlines() if log.exists() else []
    return done, calls


def installs(calls: list[str]) -> list[str]:
    return [c.split()[-1] for c in calls if c.startswith("install")]


def test_nothing_missing_calls_no_apt(tmp_path):
    done, calls = run_system(tmp_path, have=("chromium", "npm"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls == []
    assert done.stdout == ""


def test_only_chromium_missing_asks_for_chromium_alone(tmp_path):
    done, calls = run_system(tmp_path, have=("npm",))
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls[0].startswith("update")
    assert installs(calls) == ["chromium"]
    assert "installed chromium" in done.stdout


def test_only_npm_missing_asks_for_npm_alone(tmp_path):
    done, calls = run_system(tmp_path, have=("chromium",))
    assert done.returncode == 0, done.stdout + done.stderr
    assert installs(calls) == ["npm"]


def test_both_missing_one_call_each(tmp_path):
    done, calls = run_system(tmp_path, have=())
    assert done.returncode == 0, done.stdout + done.stderr
    assert installs(calls) == ["chromium", "npm"]
    assert sum(c.startswith("update") for c in calls) == 1


def test_font_missing_asks_for_the_font(tmp_path):
    done, calls = run_system(tmp_path, have=("chromium", "npm"), font=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert installs(calls) == ["fonts-dejavu-core"]


def test_refused_package_is_named_with_apts_reason_and_others_still_install(tmp_path):
    done, calls = run_system(tmp_path, have=(), refuse="npm")
    assert done.returncode == 0, done.stdout + done.stderr
    assert installs(calls) == ["chromium", "npm"]
    assert "apt-get could not install npm" in done.stdout
    assert "nodejs : Conflicts: npm" in done.stdout
    assert "E: Unable to correct problems" in done.stdout
    assert "installed chromium" in done.stdout


@pytest.mark.parametrize("ci, code", [("", 0), ("true", 1)])
def test_refused_browser_stops_ci_only(tmp_path, ci, code):
    done, calls = run_system(tmp_path, have=("npm",), refuse="chromium", ci=ci)
    assert installs(calls) == ["chromium"]
    assert done.returncode == code, done.stdout + done.stderr
    assert "apt-get could not install chromium" in done.stdout
    if code:
        assert "CI=true and Debian's chromium is still missing" in done.stderr


@pytest.mark.parametrize("ci, code", [("", 0), ("true", 1)])
def test_not_root_says_what_to_install(tmp_path, ci, code):
    done, calls = run_system(tmp_path, have=("npm",), font=False, root=False, ci=ci)
    assert calls == []
    assert done.returncode == code
    assert "sudo apt-get install chromium fonts-dejavu-core" in done.stdout


def test_make_system_runs_the_script():
    done = subprocess.run(["make", "-n", "system"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "bash scripts/system_packages.sh" in done.stdout
