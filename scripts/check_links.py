#!/usr/bin/env python3
"""Checks the relative links of README.md, CONTRIBUTING.md, results/README.md, results/gpu/README.md, results/departures/README.md and docs/*.md: every linked file exists, and every #anchor names
a heading of the linked Markdown file (GitHub's heading slugs). Run from anywhere; exits 1 on a broken link.

    python3 scripts/check_links.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def lines_outside_code(text):
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield line


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # drop punctuation (backticks, colons, parentheses, ...), keep letters
    return s.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in lines_outside_code(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def main():
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "results" / "README.md", ROOT / "results" / "gpu" / "README.md", ROOT / "results" / "departures" / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    bad = []
    for f in files:
        for line in lines_outside_code(f.read_text(encoding="utf-8")):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, frag = target.partition("#")
                dest = (f.parent / path).resolve() if path else f
                where = f"{f.relative_to(ROOT)}: {target}"
                if not dest.exists():
                    bad.append(f"{where}: no such file")
                elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                    bad.append(f"{where}: no heading #{frag} in {dest.relative_to(ROOT)}")
    for b in bad:
        print(b)
    print(f"check_links: {len(files)} files, {len(bad)} broken links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
