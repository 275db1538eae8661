#!/usr/bin/env python3
"""Draw the precision sample of issue 17 item 7 from a full replay.

    python3 tests/data/precision/draw.py replay.jsonl tests/data/precision

reads the JSON lines of `sweepgate replay --format json` (docs/replay.md)
and writes, into the output folder:

- population.tsv: every distinct fingerprint of a NEW lint error and of a
  FAIL verdict row, with its first occurrence in history order and the
  number of commits it occurs on;
- sample.tsv: per lint rule and per check row, at least 59 distinct
  fingerprints drawn with SEED (all of them when there are fewer), with
  empty label and reason columns for the labeller; a row already
  labelled in an existing sample.tsv (same id and fingerprint) keeps its
  label;
- blind.tsv: 20% of the sample (rounded up per rule, at least one),
  drawn with BLIND_SEED, without label and reason, for the second
  labeller.

A verdict row has no base side: every FAIL row counts as the PR's own.
The draw depends only on the replay's findings, so the same replay gives
the same sample.

The second draw (after the fixes of the first sample's false-positive
classes and the adjudication, docs/precision.md "Second draw") uses other
seeds and file names, and carries a first-sample label over only where
the same finding (commit and fingerprint) was labelled there:

    python3 tests/data/precision/draw.py replay.jsonl tests/data/precision \
        --seed 5917 --blind-seed 59170 --sample sample2.tsv --blind blind2.tsv \
        --carry sample.tsv
"""
import argparse
import csv
import json
import math
import random
import sys
from pathlib import Path

SEED = 177
BLIND_SEED = 1772
PER_RULE = 59
BLIND_SHARE = 0.2
COLUMNS = ["id", "rule", "commit", "pr", "location", "subject", "message", "label", "reason"]
BLIND_COLUMNS = COLUMNS[:7]
# FAIL rows that only say the replay has no sign-off (it runs `check`
# without one): they judge no content of the PR, and the server never
# meets them (a verdict always has a sign-off). Left out of the population.
NO_SIGNOFF = {
    (0, "no sign-off to attribute; no signer."),
    (3, "no upstream recipe link in the sign-off's additional detail section."),
    (5, "no sign-off body to compare with the template."),
}


def one_line(text):
    return " ".join((text or "").split())


def population(replay):
    """rule -> fingerprint -> first occurrence (and its commit count)."""
    pop = {}
    for raw in replay.open(encoding="utf-8"):
        rec = json.loads(raw)
        if "summary" in rec or rec.get("skipped"):
            continue
        short = rec["commit"][:7]
        pr = rec["pr"] if rec["pr"] is not None else ""
        seen = set()
        for f in rec["lint"]["findings"]:
            if not f["new"] or f["severity"] != "error":
                continue
            item = {
                "rule": f["rule"],
                "fingerprint": f["fingerprint"],
                "commit": short,
                "pr": pr,
                "location": f"{f['file']}:{f['line']}",
                "subject": one_line(f.get("subject")),
                "message": one_line(f["message"]),
            }
            add(pop, item, seen)
        for row in rec["check"]["rows"]:
            if row["outcome"] != "fail":
                continue
            d = row["detail"]
            if (row["check"], d["reason"]) in NO_SIGNOFF:
                continue
            loc = f"{d['file']}:{d['line']}" if d.get("file") else ""
            item = {
                "rule": f"C{row['check']:02}",
                "fingerprint": d["fingerprint"],
                "commit": short,
                "pr": pr,
                "location": loc,
                "subject": one_line(d.get("subject")),
                "message": one_line(d["reason"]),
            }
            add(pop, item, seen)
    return pop


def add(pop, item, seen):
    by_fp = pop.setdefault(item["rule"], {})
    key = (item["rule"], item["fingerprint"])
    if item["fingerprint"] not in by_fp:
        by_fp[item["fingerprint"]] = dict(item, commits=0)
    if key not in seen:
        seen.add(key)
        by_fp[item["fingerprint"]]["commits"] += 1


def draw(pop, seed=SEED):
    rng = random.Random(seed)
    sample = []
    for rule in sorted(pop):
        fps = sorted(pop[rule])
        picked = fps if len(fps) <= PER_RULE else rng.sample(fps, PER_RULE)
        for i, fp in enumerate(picked, 1):
            sample.append(dict(pop[rule][fp], id=f"{rule}-{i:03}"))
    return sample


def blind(sample, seed=BLIND_SEED):
    rng = random.Random(seed)
    out = []
    rules = sorted({s["rule"] for s in sample})
    for rule in rules:
        rows = [s for s in sample if s["rule"] == rule]
        n = max(1, math.ceil(len(rows) * BLIND_SHARE))
        out.extend(sorted(rng.sample(rows, n), key=lambda s: s["id"]))
    return out


def previous_labels(path):
    if not path.exists():
        return {}
    with path.open(encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t")
        return {(r["id"], r["fingerprint"]): r for r in rows if r.get("label")}


def write(path, columns, rows):
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def carried(path):
    """(commit, fingerprint) -> labelled row of an earlier sample."""
    if not path.exists():
        return {}
    with path.open(encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t")
        out = {}
        for r in rows:
            if r.get("label"):
                out[(r["commit"], r["fingerprint"])] = r
                # The same finding under a fingerprint that changed (a rule
                # that now matches by identity, L15 and L23): same commit,
                # rule, place and message.
                out[(r["commit"], r["rule"], r["location"], r["message"])] = r
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("replay", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--blind-seed", type=int, default=BLIND_SEED)
    ap.add_argument("--sample", default="sample.tsv")
    ap.add_argument("--blind", default="blind.tsv")
    ap.add_argument("--carry", default=None, help="an earlier labelled sample")
    a = ap.parse_args()
    out = a.out
    out.mkdir(parents=True, exist_ok=True)
    pop = population(a.replay)
    flat = [
        dict(v, fingerprint=fp)
        for rule in sorted(pop)
        for fp, v in sorted(pop[rule].items())
    ]
    write(
        out / "population.tsv",
        ["rule", "fingerprint", "commits", "commit", "pr", "location", "subject", "message"],
        flat,
    )
    sample = draw(pop, a.seed)
    old = previous_labels(out / a.sample)
    carry = carried(out / a.carry) if a.carry else {}
    for s in sample:
        prev = old.get((s["id"], s["fingerprint"]))
        same = carry.get((s["commit"], s["fingerprint"])) or carry.get(
            (s["commit"], s["rule"], s["location"], s["message"])
        )
        if prev is None and same is not None:
            prev = dict(same)
            prev["reason"] = f"(as {prev['id']}) {prev['reason']}"
        s["label"] = prev["label"] if prev else ""
        s["reason"] = prev["reason"] if prev else ""
    write(out / a.sample, COLUMNS + ["fingerprint"], sample)
    # The second blind subset names only what the labeller must judge.
    cols = BLIND_COLUMNS if a.blind == "blind.tsv" else ["id", "rule", "commit", "location", "message"]
    write(out / a.blind, cols, blind(sample, a.blind_seed))
    for rule in sorted(pop):
        n = sum(1 for s in sample if s["rule"] == rule)
        print(f"{rule}\t{len(pop[rule])} fingerprints\t{n} drawn")


if __name__ == "__main__":
    main()
