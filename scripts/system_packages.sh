#!/usr/bin/env bash
# `make system`: the Debian packages fldp needs outside Python, installed only where missing.
#
#   chromium           for the browser tests (tests/test_*browser.py); when `chromium` is not a command
#   npm                fetches the book's JavaScript once; only when there is no `npm` at all (Node.js
#                      from nodesource ships its own npm, and Debian's npm package conflicts with it)
#   fonts-dejavu-core  a font for Chromium's screenshots; when its DejaVuSans.ttf is absent
#
# Each missing package is installed by its own apt-get call, so one that cannot be installed does not
# stop the others, and is named with apt-get's own reason.  Without root or apt-get it prints the
# command to run.  Under CI=true a browser still missing at the end is an error (exit 1): the browser
# tests would fail 18 minutes later otherwise.  Uses only shell builtins besides `id` and `apt-get`,
# so tests/test_system_packages.py can run it with a PATH of fakes.
set -u

font="${FLDP_DEJAVU_FONT:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}"
ci=false
case "${CI:-}" in 1|true|True|TRUE|yes) ci=true ;; esac

have() { command -v "$1" >/dev/null 2>&1; }

missing=()
have chromium || have chromium-browser || missing+=(chromium)
have npm || missing+=(npm)
[ -e "$font" ] || missing+=(fonts-dejavu-core)

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

uid="$(id -u 2>/dev/null || echo unknown)"
if [ "$uid" != 0 ] || ! have apt-get; then
    echo "NOTE: missing Debian packages: ${missing[*]} (this is not a root shell with apt-get);"
    echo "      install them with:  sudo apt-get install ${missing[*]}"
    echo "      (chromium: the browser tests; npm: the book's JavaScript, fetched once; fonts-dejavu-core: screenshots)"
    if $ci && [[ " ${missing[*]} " == *" chromium "* ]]; then
        echo "ERROR: CI=true and Debian's chromium is missing: the browser tests cannot run" >&2
        exit 1
    fi
    exit 0
fi

echo "installing the missing Debian packages: ${missing[*]} (apt-get, one call each)"
if ! out="$(DEBIAN_FRONTEND=noninteractive apt-get update -qq 2>&1)"; then
    echo "WARNING: apt-get update failed; trying the installs with the package lists as they are:"
    printf '%s\n' "$out" | while IFS= read -r line; do echo "    $line"; done
fi

failed=()
for pkg in "${missing[@]}"; do
    echo "apt-get install $pkg"
    if out="$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" 2>&1)"; then
        echo "    installed $pkg"
        continue
    fi
    failed+=("$pkg")
    echo "WARNING: apt-get could not install $pkg; apt-get said:"
    # apt-get's own reason: its error lines and the dependency lines before them ("nodejs : Conflicts: npm")
    shown=0
    while IFS= read -r line; do
        case "$line" in
            E:*|*" : "*|*Conflicts:*|*Depends:*|*Breaks:*) echo "    $line"; shown=1 ;;
        esac
    done <<< "$out"
    if [ $shown = 0 ]; then
        printf '%s\n' "$out" | while IFS= read -r line; do echo "    $line"; done
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "WARNING: not installed: ${failed[*]}"
fi
if $ci && ! { have chromium || have chromium-browser; }; then
    echo "ERROR: CI=true and Debian's chromium is still missing after apt-get: the browser tests cannot run" >&2
    exit 1
fi
exit 0
