#!/usr/bin/env python3
"""Notebook to HTML that renders its math offline.

nbconvert's HTML templates load MathJax from a CDN, so an exported page opened without a network shows
raw `$\\tau_m$`. This module exports with nbconvert's lab template and replaces that script tag by
MathJax 3 itself (es5/tex-svg-full.js from the npm package `mathjax`, pinned in tests/e2e/package.json
and installed by `make setup`), inlined in the page, with the same delimiters as JupyterLab ($...$,
$$...$$, \\(...\\), \\[...\\]). SVG output needs no font files, so the page stays one self-contained file.

    .venv/bin/python scripts/offline_html.py NOTEBOOK.ipynb OUT_DIR

writes OUT_DIR/NOTEBOOK.html. scripts/report.py and the browser test (tests/e2e/run.js) use it.
"""
import os
import sys

from nbconvert import HTMLExporter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATHJAX_JS = os.path.join(ROOT, "tests", "e2e", "node_modules", "mathjax", "es5", "tex-svg-full.js")
PLACEHOLDER = "fits-offline-mathjax:"
REQUIRE_PLACEHOLDER = "fits-no-requirejs:"

MATHJAX_CONFIG = r"""<script>
window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
        processEscapes: true, processEnvironments: true, tags: 'ams'},
  svg: {fontCache: 'global'},
  options: {ignoreHtmlClass: 'fits-panel'}
};
</script>
"""


def mathjax_script():
    """The inline MathJax: its configuration and the library, or None when the library is not installed."""
    if not os.path.isfile(MATHJAX_JS):
        return None
    with open(MATHJAX_JS, encoding="utf-8") as f:
        js = f.read()
    # A "</script" inside the library would end the inline script early.
    js = js.replace("</script", "<\\/script")
    return MATHJAX_CONFIG + '<script id="fits-mathjax">' + js + "</script>"


def exporter():
    """nbconvert's HTML exporter (lab template) with a placeholder where the MathJax tag goes."""
    e = HTMLExporter(template_name="lab")
    e.mathjax_url = PLACEHOLDER
    e.require_js_url = REQUIRE_PLACEHOLDER
    return e


def inline_mathjax(html):
    """Replaces the placeholder MathJax tag of an export by the inline library. Without the library
    installed, the tag loads MathJax 3 from the network instead, and a note goes to stderr."""
    tag = '<script src="%s"> </script>' % PLACEHOLDER
    if tag not in html:
        raise ValueError("exported HTML has no MathJax tag to replace (nbconvert template changed?)")
    script = mathjax_script()
    if script is None:
        print("offline_html: %s is missing (run make setup); the page loads MathJax from the network"
              % os.path.relpath(MATHJAX_JS, ROOT), file=sys.stderr)
        script = MATHJAX_CONFIG + '<script src="https://cdn.jsdelivr.net/npm/mathjax@3.2.2/es5/tex-svg-full.js"></script>'
    # require.js (also from a CDN) serves ipywidgets, which these notebooks do not use: left out, so that
    # the page asks the network for nothing.
    html = html.replace('<script src="%s"></script>' % REQUIRE_PLACEHOLDER, "", 1)
    return html.replace(tag, script, 1)


def export_node(nb, configure=None):
    """HTML of the notebook node nb with offline math; configure(exporter) may set more options."""
    e = exporter()
    if configure:
        configure(e)
    body, _ = e.from_notebook_node(nb)
    return inline_mathjax(body)


def main(argv):
    if len(argv) != 3:
        print("usage: offline_html.py NOTEBOOK.ipynb OUT_DIR", file=sys.stderr)
        return 2
    import nbformat

    src, out_dir = argv[1], argv[2]
    try:
        nb = nbformat.read(src, as_version=4)
    except (OSError, ValueError) as err:
        print("offline_html: %s: %s" % (src, err), file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, os.path.splitext(os.path.basename(src))[0] + ".html")
    html = export_node(nb)
    with open(out, "w", encoding="utf-8") as f:
        f.write(html)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
