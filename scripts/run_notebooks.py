#!/usr/bin/env python3
"""Headless notebook runner for the toolkit's GoNB notebooks.

For every notebook given (default: notebooks/*.ipynb) it

  1. checks the stored file: valid nbformat 4, kernelspec "gonb", and no outputs or execution counts
     (notebooks are committed clean; `--strip` cleans them);
  2. executes it top to bottom with the GoNB kernel (nbclient), writing the executed copy to the output
     folder (default notebooks/.executed/, ignored by git) and the kernel's log beside it;
  3. prints one summary line.

It exits with status 1 if any notebook fails a check or any cell errors, 2 on bad usage.
Environment: FITS_QUICK=1 is passed to the kernel (notebooks may shrink expensive cells), and so are
FITS_MODE and FITS_RUNS (the results notebooks' mode and runs folder); GOMLX_NO_AUTO_INSTALL=1 and
FITS_HEADLESS=1 are always set (cells with widgets, which wait for a browser, skip themselves).

Usage: .venv/bin/python scripts/run_notebooks.py [--out DIR] [--timeout S] [--cell-times] [--check-only | --strip] [NOTEBOOK ...]
"""

import argparse
import glob
import os
import re
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

KERNEL = "gonb"

# The first code cell of every notebook: the module set-up, then GoNB's build flags (no symbol table or DWARF
# in each cell's program, linked by Go's own linker: most of a cell's time is its link; docs/notebooks.md has
# the numbers) and no automatic `go get` (notebooks/setup.sh).
FIRST_CELL = '!*bash ${GONB_DIR}/setup.sh\n%goflags "-ldflags=-s -w -linkmode=internal"\n%noautoget'


def check_stored(nb, path):
    """Returns a list of problems with a stored (committed) notebook."""
    problems = []
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        problems.append(f"not valid nbformat {nb.get('nbformat')}: {str(e).splitlines()[0]}")
    if nb.get("nbformat") != 4:
        problems.append(f"nbformat {nb.get('nbformat')}, want 4")
    ks = nb.get("metadata", {}).get("kernelspec", {})
    if ks.get("name") != KERNEL:
        problems.append(f"kernelspec name {ks.get('name')!r}, want {KERNEL!r}")
    extra = sorted(set(nb.get("metadata", {}).get("language_info", {})) - {"name"})
    if extra:
        problems.append(f"metadata.language_info carries {', '.join(extra)} (run make notebooks-strip)")
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or code[0].source != FIRST_CELL:
        problems.append(f"the first code cell is not the set-up cell {FIRST_CELL!r} (see notebooks/setup.sh)")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {i} has {len(cell.outputs)} stored output(s)")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i} has execution_count {cell.execution_count}")
    return problems


# Metadata that JupyterLab or a kernel writes on save and that the committed notebooks do not carry.
VOLATILE_CELL_METADATA = ("execution", "scrolled", "collapsed")
VOLATILE_NOTEBOOK_METADATA = ("widgets",)


def strip(path):
    """Removes outputs and execution counts in place; returns True if the file changed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
    # A running kernel fills in language_info (version, mimetype, lexer...); the committed form keeps
    # only its name, so that a notebook saved from the lab strips back to the committed bytes.
    info = nb.metadata.get("language_info", {})
    nb.metadata["language_info"] = {"name": info.get("name", "go")}
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    out = nbformat.writes(nb) + "\n"
    if out != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(out)
        return True
    return False


# GoNB reports a cell program (or `!` shell command) that exits with a nonzero status not as an error
# reply but as a last stderr line "exit status N".
EXIT_STATUS = re.compile(r"(?:^|\n)exit status ([1-9][0-9]*)\s*$")
# A call of a gonbdisplay function that shows something (all but Check).
DISPLAY_CALL = re.compile(r"gonbdisplay\.(?!Check\b)[A-Z]\w*\(")


def first_error(nb):
    """Returns (cell index, one-line message) of the first failed cell of an executed notebook."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        stderr = ""
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                msg = f"{out.get('ename', '')}: {out.get('evalue', '')}".strip(": ")
                return i, " ".join(msg.split())[:300]
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                stderr += out.get("text", "")
        # A display call whose output never arrived (e.g. lost when the program exited too early).
        if DISPLAY_CALL.search(cell.source) and not any(o.get("output_type") == "display_data" for o in cell.get("outputs", [])):
            if not EXIT_STATUS.search(stderr):
                return i, "the cell calls gonbdisplay but displayed nothing"
        m = EXIT_STATUS.search(stderr)
        if m:
            first = next((l for l in stderr.splitlines() if l.strip()), "")
            return i, f"exited with status {m.group(1)}: {' '.join(first.split())[:300]}"
    return None, None


def execute(path, out_dir, timeout, cell_times=False):
    """Executes one notebook; returns (ok, seconds, message). With cell_times, prints each code cell's wall
    time as the client measures it (the kernel's own timestamps have whole seconds only)."""
    nb = nbformat.read(path, as_version=4)
    problems = check_stored(nb, path)
    if problems:
        return False, 0.0, "stored notebook: " + "; ".join(problems)
    name = os.path.basename(path)
    os.makedirs(out_dir, exist_ok=True)
    out_path = os.path.join(out_dir, name)
    log_path = os.path.join(out_dir, os.path.splitext(name)[0] + ".kernel.log")
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL,
        allow_errors=False,
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
    )
    if cell_times:
        started = {}
        client.on_cell_execute = lambda cell, cell_index: started.__setitem__(cell_index, time.monotonic())

        def report(cell, cell_index, execute_reply):
            line = " ".join("".join(cell.source).split())[:70]
            print(f"      cell {cell_index:3d} {time.monotonic() - started[cell_index]:6.2f} s  {line}", flush=True)

        client.on_cell_executed = report
    start = time.monotonic()
    ok, msg = True, ""
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            client.execute(stdout=log, stderr=log)
        except CellTimeoutError as e:
            ok, msg = False, f"cell timed out after {timeout} s: {str(e).splitlines()[0]}"
        except DeadKernelError as e:
            ok, msg = False, f"kernel died: {e}"
        except CellExecutionError:
            ok = False
        except Exception as e:  # kernel failed to start, etc.
            ok, msg = False, f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    secs = time.monotonic() - start
    idx, err = first_error(nb)
    if idx is not None:
        ok, msg = False, f"cell {idx}: {err}"
    nbformat.write(nb, out_path)
    if ok:
        msg = f"{sum(c.cell_type == 'code' for c in nb.cells)} code cells -> {out_path}"
    elif not msg:
        msg = f"failed (see {out_path} and {log_path})"
    else:
        msg += f" (see {out_path}, {log_path})"
    return ok, secs, msg


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: notebooks/*.ipynb)")
    ap.add_argument("--out", default=os.path.join(root, "notebooks", ".executed"), help="folder for executed copies")
    ap.add_argument("--timeout", type=int, default=900, help="per-cell timeout in seconds")
    ap.add_argument("--cell-times", action="store_true", help="print each code cell's wall time")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check-only", action="store_true", help="only check the stored notebooks")
    mode.add_argument("--strip", action="store_true", help="remove outputs and execution counts in place")
    args = ap.parse_args(argv)

    paths = args.notebooks or sorted(glob.glob(os.path.join(root, "notebooks", "*.ipynb")))
    if not paths:
        print("run_notebooks: no notebooks found", file=sys.stderr)
        return 2
    for p in paths:
        if not os.path.isfile(p):
            print(f"run_notebooks: {p}: no such file", file=sys.stderr)
            return 2

    if args.strip:
        for p in paths:
            print(("stripped  " if strip(p) else "clean     ") + os.path.relpath(p))
        return 0

    failed = 0
    if args.check_only:
        for p in paths:
            problems = check_stored(nbformat.read(p, as_version=4), p)
            failed += bool(problems)
            print(f"{'FAIL' if problems else 'ok  '}  {os.path.relpath(p)}" + (": " + "; ".join(problems) if problems else ""))
        return 1 if failed else 0

    os.environ["GOMLX_NO_AUTO_INSTALL"] = "1"
    os.environ["GOTOOLCHAIN"] = "go1.27.3"
    os.environ.setdefault("GOEXPERIMENT", "simd")
    os.environ["FITS_HEADLESS"] = "1"
    total = time.monotonic()
    for p in paths:
        ok, secs, msg = execute(p, args.out, args.timeout, args.cell_times)
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'}  {os.path.basename(p):32s} {secs:6.1f} s  {msg}", flush=True)
    print(f"notebooks: {len(paths) - failed}/{len(paths)} passed in {time.monotonic() - total:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
