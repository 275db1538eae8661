#!/usr/bin/env python3
"""Tables of docs/precision.md "Second draw" from a replay and the labelled
second sample.

    python3 tests/data/precision/table2.py replay.jsonl tests/data/precision

prints the per-rule replay table (new findings per severity, commits run),
the PRs with at least one error (whole scope, before; new, after), the
paired check/lint disagreements, and the per-rule precision of
sample2.tsv over population.tsv (exact when every fingerprint is
labelled; the one-sided 95% Clopper-Pearson lower bound beside it).
"""
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from table import lower_bound  # noqa: E402


def main():
    replay, d = Path(sys.argv[1]), Path(sys.argv[2])
    recs = [json.loads(l) for l in replay.open(encoding="utf-8")]
    summary = recs[-1]["summary"]
    recs = [r for r in recs[:-1] if not r.get("skipped")]
    prs = [r for r in recs if r["pr"] is not None]
    last = prs[-150:]
    print("| population | before (any error in scope) | after (new errors) |")
    print("|---|---|---|")
    for name, rs in [("all first-parent commits", recs), ("merged PRs (subject names #NNNN)", prs), ("the last 150 merged PRs", last)]:
        b = sum(1 for r in rs if r["lint"]["errors"] > 0)
        a = sum(1 for r in rs if r["lint"]["new_errors"] > 0)
        print(f"| {name} ({len(rs):,}) | {b} ({b/len(rs):.1%}) | {a} ({a/len(rs):.1%}) |")
    print()
    print("| rule | commits run | new E | new W | new I | pre-existing | distinct new fingerprints |")
    print("|---|---|---|---|---|---|---|")
    for rule, t in sorted(summary["rules"].items()):
        print(f"| {rule} | {t['commits_run']:,} | {t['new_errors']:,} | {t['new_warnings']:,} | {t['new_info']:,} | {t['pre_existing']:,} | {t['fingerprints']:,} |")
    print()
    print("| check / lint rules | commits where only the check FAILs | commits where only the lint has a new error |")
    print("|---|---|---|")
    for name, t in sorted(summary["pairs"].items()):
        ex = ", ".join(t["check_only_commits"] + t["lint_only_commits"])
        print(f"| {name} | {t['check_only']} | {t['lint_only']} |" + (f" <!-- {ex} -->" if ex else ""))
    print()
    pop = list(csv.DictReader((d / "population.tsv").open(encoding="utf-8"), delimiter="\t"))
    sample = list(csv.DictReader((d / "sample2.tsv").open(encoding="utf-8"), delimiter="\t"))
    blind = {r["id"] for r in csv.DictReader((d / "blind2.tsv").open(encoding="utf-8"), delimiter="\t")}
    print("| rule / row | distinct new fingerprints | labelled | false | precision | 95% lower bound | in blind2 |")
    print("|---|---|---|---|---|---|---|")
    for rule in sorted({r["rule"] for r in pop}):
        n_pop = sum(1 for r in pop if r["rule"] == rule)
        rows = [r for r in sample if r["rule"] == rule and r["label"]]
        n = len(rows)
        fp = sum(1 for r in rows if r["label"] == "false")
        prec = (n - fp) / n if n else 0.0
        note = " (all)" if n == n_pop else ""
        nb = sum(1 for r in rows if r["id"] in blind)
        print(f"| {rule} | {n_pop} | {n}{note} | {fp} | {n-fp}/{n} ({prec:.1%}) | {lower_bound(n, n-fp):.1%} | {nb} |")


if __name__ == "__main__":
    main()
