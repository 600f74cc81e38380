#!/usr/bin/env python3
"""Tables of a `scopecheck run --mutants --json` log (one JSON object per file): the mutation
score per class of weakening and per scope of the instruction weakened, with the mutants that
compile to the original's machine code counted apart, and the score over the classes this GPU
was seen to kill at least once (issue 36, deliverable 4).

Usage: mutation-table.py LOG.jsonl [MORE.jsonl ...]   (Markdown on stdout)
"""
import json
import sys
from collections import defaultdict


def rows(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    v = json.loads(line)
                except json.JSONDecodeError:
                    continue
                for m in v.get("mutants", []):
                    m["file"] = v.get("file")
                    yield m


def tally(mutants, key):
    t = defaultdict(lambda: defaultdict(float))
    for m in mutants:
        k = key(m)
        if m.get("killable") is None:
            t[k]["unchecked"] += 1
            continue
        if not m.get("killable"):
            continue
        if m.get("same_machine_code"):
            t[k]["same"] += 1
        elif "error" in m:
            t[k]["notrun"] += 1
        else:
            t[k]["ran"] += 1
            t[k]["seconds"] += m.get("wall_seconds", m.get("seconds", 0.0))
            t[k]["instances"] += m.get("instances", 0)
            if m.get("killed"):
                t[k]["killed"] += 1
                t[k]["kill_seconds"] += m.get("seconds", 0.0)
    return t


def table(t, title):
    out = [f"| {title} | ran | killed | score | same machine code | not run | unchecked "
           f"| s per mutant | instances |", "|---|---|---|---|---|---|---|---|---|"]
    total = defaultdict(float)
    for k in sorted(t, key=str):
        r = t[k]
        for f in r:
            total[f] += r[f]
        out.append(line(k, r))
    out.append(line("**all**", total))
    return "\n".join(out)


def line(k, r):
    ran = int(r["ran"])
    score = f"{r['killed'] / ran:.2f}" if ran else "-"
    per = f"{r['seconds'] / ran:.2f}" if ran else "-"
    return (f"| {k} | {ran} | {int(r['killed'])} | {score} | {int(r['same'])} | "
            f"{int(r['notrun'])} | {int(r['unchecked'])} | {per} | {int(r['instances']):,} |")


def main():
    mutants = list(rows(sys.argv[1:]))
    by_class = tally(mutants, lambda m: m.get("class", "?"))
    by_scope = tally(mutants, lambda m: m.get("scope") or "none")
    print(table(by_class, "class"))
    print()
    print(table(by_scope, "scope of the instruction"))
    shown = {k for k, r in by_class.items() if r["killed"] > 0}
    ran = sum(r["ran"] for k, r in by_class.items() if k in shown)
    killed = sum(r["killed"] for k, r in by_class.items() if k in shown)
    secs = sum(r["seconds"] for k, r in by_class.items() if k in shown)
    if ran:
        print(f"\nOver the classes killed at least once ({', '.join(sorted(shown))}): "
              f"{int(killed)} / {int(ran)} = {killed / ran:.3f}, {secs / ran:.2f} s per mutant")
    killers = defaultdict(int)
    for m in mutants:
        if m.get("killed"):
            killers[m.get("killed_by") or "-"] += 1
    print("\nKilled by configuration: " + ", ".join(f"{k} {v}" for k, v in sorted(killers.items())))
    survivors = [m for m in mutants if m.get("killable") and "killed" in m and not m["killed"]]
    print(f"\nSurvivors ({len(survivors)}):")
    for m in survivors:
        print(f"- {m['file']}: {m['mutant']} ({int(m.get('instances', 0)):,} instances, "
              f"{m.get('wall_seconds', 0):.1f} s)")


if __name__ == "__main__":
    main()
