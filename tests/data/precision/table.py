#!/usr/bin/env python3
"""The per-rule precision table of docs/precision.md from the labelled sample.

    python3 tests/data/precision/table.py tests/data/precision

reads population.tsv and sample.tsv (draw.py) and prints, per lint rule and
check row: distinct NEW error/FAIL fingerprints, commits they occur on,
sample size, false positives, observed precision and its one-sided 95%
Clopper-Pearson lower bound (59 of 59 gives 95.0%). When the sample is the
whole population (every fingerprint labelled), the observed precision is
exact for the replay and the bound is printed for comparison only.
"""
import csv
import sys
from math import comb
from pathlib import Path


def tail(n, x, p):
    """P(X >= x) for X ~ Binomial(n, p)."""
    return sum(comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(x, n + 1))


def lower_bound(n, x, alpha=0.05):
    """One-sided Clopper-Pearson lower bound of a proportion x/n."""
    if x == 0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if tail(n, x, mid) < alpha:
            lo = mid
        else:
            hi = mid
    return lo


def main():
    d = Path(sys.argv[1])
    pop = list(csv.DictReader((d / "population.tsv").open(encoding="utf-8"), delimiter="\t"))
    sample = list(csv.DictReader((d / "sample.tsv").open(encoding="utf-8"), delimiter="\t"))
    rules = sorted({r["rule"] for r in pop})
    print("| rule | distinct fingerprints | occurrences (commits) | sample | false positives | precision | 95% lower bound |")
    print("|---|---|---|---|---|---|---|")
    for rule in rules:
        fps = [r for r in pop if r["rule"] == rule]
        occ = sum(int(r["commits"]) for r in fps)
        rows = [r for r in sample if r["rule"] == rule and r["label"]]
        n = len(rows)
        fp = sum(1 for r in rows if r["label"] == "false")
        prec = (n - fp) / n if n else 0.0
        lb = lower_bound(n, n - fp)
        exhausted = n == len(fps)
        note = " (all)" if exhausted else ""
        print(
            f"| {rule} | {len(fps)} | {occ} | {n}{note} | {fp} | {prec:.1%} | {lb:.1%} |"
        )


if __name__ == "__main__":
    main()
