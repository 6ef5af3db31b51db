"""One check the stored run functions' tests share: a run read back from the store is the run."""
from __future__ import annotations

import pytest

from fldp.repro import store as S


def same(a, b) -> bool:
    """Equal as the store writes them (NaN, e.g. a run without DP's spend, equals itself here)."""
    return S.canonical(a) == S.canonical(b)


def assert_read_back(store: S.RunStore, fn, config: dict, monkeypatch, target: tuple, timing: tuple = ()):
    """``fn(**config)`` through ``store`` equals a direct call (but for the result's own ``timing``
    keys, which differ between two calls) and is stored once; with ``target`` ((module, attribute):
    the expensive call inside the run) made to raise, a forced fresh run fails (the patch is what
    the run calls) and a second run is read back unchanged, timings included."""
    first = store.run(fn, config)
    untimed = lambda r: {k: v for k, v in r.items() if k not in timing} if timing else r  # noqa: E731
    assert same(untimed(first), untimed(S.normalise(fn(**config))))
    assert store.load(fn, config) is not None

    def computed(*_, **__):
        raise AssertionError("a stored run was computed again: it should have been read back from the store")

    monkeypatch.setattr(*target, computed)
    with pytest.raises(AssertionError, match="computed again"):
        store.run(fn, config, fresh=True)
    again = store.run(fn, config)
    assert same(again, first) and len(list(store.records())) == 1
    return first
