"""Sphinx configuration of the fldp book (``make book``; staged and built by :mod:`fldp.repro.book`).

Sphinx + MyST-NB + sphinx-book-theme, Jupyter Book 1's stack: the chapters are the executed
full-mode notebooks, rendered as committed (never executed here); every script a page loads is
served from the site itself (the widget manager and MathJax are vendored from npm).
"""
import importlib

project = "fldp"
author = "the fldp developers"
copyright = "the fldp developers"
html_title = "fldp: differential privacy in federated learning, reproduced"

extensions = ["myst_nb", "sphinx.ext.autodoc"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 4  # the register links its own sections by GitHub-style slugs
nb_execution_mode = "off"  # render the committed executed notebooks; never run them
nb_merge_streams = True
nb_ipywidgets_js = {"vendor/html-manager/dist/embed.js": {}}  # _static/vendor/: no CDN
mathjax_path = "vendor/mathjax/es5/tex-chtml.js"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_member_order = "bysource"

exclude_patterns = ["_build", "_generated/**", "Thumbs.db", ".DS_Store"]
html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_css_files = ["fldp.css"]
html_js_files = ["mathjax-widgets.js"]  # the widget manager's MathJax 2 calls, answered by MathJax 3
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "search_bar_text": "Search the book...",
    # pydata-sphinx-theme 0.20 puts a search field in a header bar above the page unless this is set;
    # the sidebar already has the book's search field.
    "navbar_persistent": [],
}
html_context = {"default_mode": "light"}  # an explicit mode: the theme logs an error for an unset one
html_favicon = "_static/favicon.svg"  # a page without one requests /favicon.ico and logs a 404
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False  # no _sources/ copy of every page (4 MB): the repository holds them


def _object(dotted):
    """The object a dotted name imports to (longest importable module, then attributes), or None."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _reexported(app, env, node, contnode):
    """Resolve a reference to a re-exported name (``fldp.data.cached_federated``,
    ``fldp.teach.widgets.wei2020_explorer``) to where the object is described (its defining module)."""
    if node.get("refdomain") != "py" or not node.get("reftarget", "").strip("~."):
        return None
    target = node["reftarget"].lstrip("~")
    module = node.get("py:module")
    for name in ([f"{module}.{target.lstrip('.')}"] if module else []) + [target.lstrip(".")]:
        obj = _object(name) if name.startswith("fldp") else None
        home, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if not (home and qualname and home.startswith("fldp")) or f"{home}.{qualname}" == name:
            continue
        return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"],
                                                 f"{home}.{qualname}", node, contnode)
    return None


def setup(app):
    app.connect("missing-reference", _reexported)
