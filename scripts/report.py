#!/usr/bin/env python3
"""One HTML report of the paper's reproduction from the executed notebooks.

It reads the executed copies that scripts/run_notebooks.py writes (default notebooks/.executed/), puts
them into one document behind an index that maps every table and figure of the paper to its notebook,
hides the Go code (the outputs carry every table, with the paper's numbers beside ours, and every
figure, embedded), and writes OUT/index.html with nbconvert. A notebook that is missing or has a failed
cell is named in the index.

Usage: .venv/bin/python scripts/report.py [--executed DIR] [--out DIR] [--mode quick|full] [--runs DIR]
"""

import argparse
import datetime
import glob
import os
import sys

import nbformat

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline_html  # noqa: E402  (the export with MathJax inlined: math renders offline)

# Every table and figure of the paper (as the paper numbers them) and the notebook that reproduces it.
PAPER_ITEMS = [
    ("Table 1", "Performance on SHD, SHD* and SSC", "06_main_results"),
    ("Table 2", "Performance on GSC", "06_main_results"),
    ("Table 3", "Factorized ablation on SSC", "07_ablations"),
    ("Table 4", "Theoretical energy on SSC, W = 512", "11_energy_and_time"),
    ("Table 5", "CT-to-DT alignment", "10_ct_dt_fidelity"),
    ("Table A.1", "Neuron constants", "07_ablations"),
    ("Table A.2", "Learning rate and dropout (the recipes of every run)", "07_ablations"),
    ("Table A.3", "Runtime of the temporal update", "11_energy_and_time"),
    ("Table A.4", "Training time", "11_energy_and_time"),
    ("Table A.5", "Factorized ablation on GSC", "07_ablations"),
    ("Table A.6", "Factorized ablation on SHD*", "07_ablations"),
    ("Table A.7", "TS cascade order sweep M = 3-5 on SSC", "07_ablations"),
    ("Table A.8", "Target-frequency perturbation", "09_perturbation"),
    ("Table A.9", "sMNIST", "12_smnist_dvs"),
    ("Table A.10", "DVS Gesture 128", "12_smnist_dvs"),
    ("Figure 1", "The TS module (diagram; its responses)", "03_temporal_shaping"),
    ("Figure 2", "Learned organisation on GSC (Δf*, Δτ)", "08_learned_organisation"),
    ("Figure 3", "CT vs DT frequency of a trained model", "10_ct_dt_fidelity"),
    ("Figure A.1", "Zero-input trajectories", "02_discretization"),
    ("Figure A.2", "Learned β and λ", "08_learned_organisation"),
]


def failed_cell(nb):
    """Returns the index of the first code cell with an error output, or None."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return i
            if out.get("output_type") == "stream" and out.get("name") == "stderr" and "exit status" in out.get("text", ""):
                return i
    return None


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--executed", default=os.path.join(root, "notebooks", ".executed"), help="executed notebooks")
    ap.add_argument("--out", default=os.path.join(root, "test-output", "report"), help="output folder")
    ap.add_argument("--mode", default=os.environ.get("FITS_MODE", "quick") or "quick", help="the mode the notebooks ran in")
    ap.add_argument("--runs", default=os.environ.get("FITS_RUNS", ""), help="the runs folder the notebooks read")
    args = ap.parse_args(argv)

    sources = sorted(glob.glob(os.path.join(root, "notebooks", "[0-9][0-9]_*.ipynb")))
    if not sources:
        print("report: no notebooks found", file=sys.stderr)
        return 2
    status = {}
    book = nbformat.v4.new_notebook()
    book.metadata = {"kernelspec": {"name": "gonb", "display_name": "Go (gonb)", "language": "go"}, "language_info": {"name": "go"}}
    parts = []
    for src in sources:
        stem = os.path.splitext(os.path.basename(src))[0]
        path = os.path.join(args.executed, stem + ".ipynb")
        if not os.path.isfile(path):
            status[stem] = "not executed"
            continue
        nb = nbformat.read(path, as_version=4)
        bad = failed_cell(nb)
        status[stem] = "ok" if bad is None else f"cell {bad} failed"
        parts.append((stem, nb))

    runs = args.runs or os.path.join("runs", args.mode)
    lines = [
        "# FiTS: the paper's tables and figures, reproduced",
        "",
        f"Mode **{args.mode}**, runs read from `{runs}`, report written {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.",
        "",
    ]
    if args.mode == "quick":
        lines += [
            "Quick mode trains small stand-ins of the paper's experiments on data this machine has (the embedded synthetic task, "
            "spoken digits synthesised with espeak-ng, row-wise MNIST, synthetic DVS gestures). Their numbers are not the paper's and "
            "are not compared with them; each table says which stand-in it used. `FITS_MODE=full make reproduce` builds this report from "
            "the paper's recipes on the real datasets.",
            "",
        ]
    lines += ["| paper | what | notebook | status |", "| --- | --- | --- | --- |"]
    for label, what, stem in PAPER_ITEMS:
        lines.append(f"| {label} | {what} | [{stem}](#{stem}) | {status.get(stem, 'not executed')} |")
    lines += ["", "The Go code of the notebooks is hidden here; open them with `make lab` to read and run it."]
    book.cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
    for stem, nb in parts:
        book.cells.append(nbformat.v4.new_markdown_cell(f'<a id="{stem}"></a>\n\n---\n\n*Notebook `notebooks/{stem}.ipynb` ({status[stem]})*'))
        book.cells.extend(nb.cells)

    for i, cell in enumerate(book.cells):
        cell["id"] = f"cell-{i}"  # the notebooks' own ids repeat across notebooks
    def configure(exporter):
        exporter.exclude_input = True
        exporter.exclude_input_prompt = True
        exporter.exclude_output_prompt = True

    body = offline_html.export_node(book, configure)
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, "index.html")
    with open(out, "w", encoding="utf-8") as f:
        f.write(body)
    failed = [s for s, v in status.items() if v != "ok"]
    print(f"report: {out} ({len(parts)} notebooks" + (f"; not ok: {', '.join(failed)}" if failed else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
