"""How to call a function, for students: the signature a task's "Helps" line shows, and the hint
printed under a TypeError when a keyword-only fldp function is called positionally."""
from __future__ import annotations

import inspect
import re
import sys
from typing import Any, Callable, Dict, Optional

__all__ = ["signature", "HELPS", "helps_with_signatures", "keyword_hint", "install_keyword_hints"]


def signature(func: Callable) -> str:
    """``name(*, a, b=1)``: how to call ``func``, without annotations (the "Helps" lines show it).

    fldp's formulas take keyword arguments only, so a student's first try ``th.gaussian_c(delta)``
    raises a TypeError; the signature beside the name says how to call it."""
    params = []
    star = False
    for p in inspect.signature(func).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        elif p.kind is p.VAR_POSITIONAL:
            star = True
        text = ("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name
        if p.default is not p.empty:
            text += f"={p.default!r}" if not callable(p.default) else f"={getattr(p.default, '__name__', '...')}"
        params.append(text)
    return f"{func.__name__}({', '.join(params)})"


HELPS = "**Helps:**"
_REFERENCE = re.compile(r"`(\w+)\.(\w+)(?:\([^`]*\))?`(?!'s)")


def helps_with_signatures(text: str, namespace: Dict[str, Any]) -> str:
    """``text`` with each reference to a function after "**Helps:**", such as `` `th.sigma_uplink` ``,
    written with its signature (`` `th.sigma_uplink(*, C, m, eps, L=1, ...)` ``); ``namespace`` maps
    the notebook's import names (``th``, ``nbafl``, ...) to modules.  A reference followed by 's
    (its docstring) is left as it is.  tests/test_exercises.py checks that every notebook's "Helps"
    lines are what this returns, so a signature that changes is caught."""
    out = []
    for line in text.split("\n"):
        if HELPS in line:
            head, _, tail = line.partition(HELPS)

            def sub(m: re.Match) -> str:
                module = namespace.get(m.group(1))
                func = getattr(module, m.group(2), None) if module is not None else None
                return f"`{m.group(1)}.{signature(func)}`" if inspect.isfunction(func) else m.group(0)
            line = head + HELPS + _REFERENCE.sub(sub, tail)
        out.append(line)
    return "\n".join(out)


_POSITIONAL = re.compile(r"^(\w+)\(\) takes (\d+) positional arguments? but (\d+).* given")
_MISSING_KW = re.compile(r"^(\w+)\(\) missing \d+ required keyword-only arguments?: (.+)$")


def _fldp_function(name: str) -> Optional[Callable]:
    """The fldp function called ``name`` (searched in the imported fldp modules), or None."""
    for modname, module in sorted(sys.modules.items()):
        if modname == "fldp" or modname.startswith("fldp."):
            obj = getattr(module, name, None)
            if inspect.isfunction(obj) and (obj.__module__ or "").startswith("fldp"):
                return obj
    return None


def keyword_hint(exc: BaseException) -> Optional[str]:
    """A hint for a TypeError from calling a keyword-only fldp function positionally (or without
    a required keyword), naming the keywords; None for any other exception."""
    if not isinstance(exc, TypeError):
        return None
    text = str(exc)
    found = _POSITIONAL.match(text) or _MISSING_KW.match(text)
    func = _fldp_function(found.group(1)) if found else None
    if func is None:
        return None
    keywords = [p.name for p in inspect.signature(func).parameters.values()
                if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    example = ", ".join(f"{k}=..." for k in keywords) or "name=value"
    if found.re is _POSITIONAL:
        return (f"hint: {func.__name__} takes its arguments by name only: {signature(func)}. "
                f"Call it as {func.__name__}({example}).")
    return f"hint: {func.__name__} needs {found.group(2)} by name: {signature(func)}."


def _show_with_hint(shell, etype, value, tb, tb_offset=None):
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    hint = keyword_hint(value)
    if hint:
        print(hint)


def install_keyword_hints() -> bool:
    """In an IPython kernel, print :func:`keyword_hint` under the traceback of such a TypeError
    (``import fldp.teach.exercises`` does it).  False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    shell.set_custom_exc((TypeError,), _show_with_hint)
    return True
