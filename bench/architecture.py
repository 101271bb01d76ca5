"""The measures of issue 23 ("Measure and report") from lagsim's syntax, as one markdown table.

    .venv/bin/python bench/architecture.py          # the syntax measures, a few seconds
    .venv/bin/python bench/architecture.py --mypy   # and mypy's error count (about 1.5 min)

Rows: the import graph's largest cycle (modules; imports inside functions and ``"lagsim.x.y"``
strings count), imports pointing up the layers, private names crossing modules (and private
attributes of objects only another module defines), attribute
writes on objects another module made, parameters typed ``Any`` in lagsim/run/engines, mypy's
errors (pyproject's ``[tool.mypy]``), the largest module (lines) and the largest function
(lines; and the function with the most branches: if, conditional expression, for, while, try,
with, comprehension ``for``, each ``and``/``or``), then the modules of each subpackage.
The scan is tests/structure.py, the one tests/test_architecture.py holds the rules with; what
each count means in detail is said there.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

import structure  # noqa: E402


def mypy_errors() -> tuple[int, float]:
    """mypy's error count on lagsim/ (pyproject's settings) and its wall time."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - start
    last = (done.stdout.strip().splitlines() or [""])[-1]
    if last.startswith("Success"):
        return 0, seconds
    found = re.match(r"Found (\d+) errors? in", last)
    if found is None:
        raise SystemExit(f"mypy gave no count: {done.stdout[-500:]}{done.stderr[-500:]}")
    return int(found.group(1)), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mypy", action="store_true", help="also run mypy (about 1.5 min)")
    args = parser.parse_args()

    start = time.perf_counter()
    package = structure.Package.scan(ROOT)
    found = structure.cycles(package)
    largest = found[0][0] if found else []
    lines = {m.name: len((ROOT / m.path).read_text(encoding="utf-8").splitlines())
             for m in package.modules.values()}
    biggest_module = max(lines, key=lambda name: lines[name])
    functions = structure.functions(package)
    longest = max(functions, key=lambda f: f.lines)
    branchiest = max(functions, key=lambda f: f.branches)
    engines = structure.any_parameters(package, "lagsim.run.engines")
    by_file = ", ".join(f"{Path(path).name} {n}"
                        for path, n in Counter(s.path for s in engines).most_common())

    def short(name: str) -> str:
        return name.removeprefix("lagsim.")

    rows = [
        ("largest import cycle (modules)",
         f"{len(largest) or 1}" + (f": {' '.join(short(m) for m in largest)}" if largest else
                                   "")),
        ("other cycles (modules each)", ", ".join(str(len(c)) for c, _ in found[1:]) or "none"),
        ("imports pointing up the layers", str(len(structure.upward(package)))),
        ("click outside cli, matplotlib outside viz", str(len(structure.confined(package)))),
        ("private names crossing modules", str(len(structure.private_crossings(package)))),
        ("private attributes of other modules' objects read",
         str(len(structure.private_attributes(package)))),
        ("attribute writes on other modules' objects",
         str(len(structure.foreign_writes(package)))),
        ("`Any` parameters in lagsim/run/engines",
         f"{len(engines)}" + (f" ({by_file})" if engines else "")),
    ]
    scanned = time.perf_counter() - start
    if args.mypy:
        count, seconds = mypy_errors()
        rows.append(("mypy errors (lagsim/)", f"{count} ({seconds:.0f} s)"))
    else:
        rows.append(("mypy errors (lagsim/)", "not measured (--mypy)"))
    rows += [
        ("largest module (lines)",
         f"{lines[biggest_module]} ({package.modules[biggest_module].path})"),
        ("longest function (lines, branches)",
         f"{longest.lines}, {longest.branches} ({longest.path}:{longest.line} {longest.name})"),
        ("most branches (lines, branches)",
         f"{branchiest.lines}, {branchiest.branches} "
         f"({branchiest.path}:{branchiest.line} {branchiest.name})"),
        ("modules, lines in lagsim/", f"{len(package.modules)}, {sum(lines.values())}"),
    ]
    print("| measure | value |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")

    per_package = Counter(m.package for m in package.modules.values() if not m.is_package)
    package_lines: Counter[str] = Counter()
    for module in package.modules.values():
        package_lines[module.package] += lines[module.name]
    print("\n| subpackage | modules | lines |\n| --- | --- | --- |")
    for name in sorted(per_package):
        print(f"| {name} | {per_package[name]} | {package_lines[name]} |")
    print(f"\nThe syntax scan took {scanned:.1f} s.")


if __name__ == "__main__":
    main()
