#!/usr/bin/env python3
"""Instructions per allocator operation from a callgrind profile.

    valgrind --tool=callgrind --callgrind-out-file=cg.out build/bench/bench_allocator \
        --benchmark_filter=BM_ForwardPasses --benchmark_min_time=2
    scripts/callgrind_alloc_ops.py cg.out

Sums the inclusive cost of every call into CachingAllocator::malloc and ::free made from outside the
allocator, and divides by the number of those calls (docs/development.md, Benchmarks). Callgrind
counts instructions, which repeat under load where wall times do not.
"""
import re
import sys


def main(path):
    names = {}

    def name(token):
        # Compressed names: "(id) name" the first time, "(id)" afterwards.
        m = re.match(r"\((\d+)\)(?: (.*))?", token)
        if not m:
            return token
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), token)

    caller = callee = None
    pending = None  # (operation, calls) of the calls= line whose cost line comes next
    totals = {}
    with open(path) as f:
        for line in f:
            if pending:
                op, calls = pending
                pending = None
                cost = int(line.split()[1])
                c, i = totals.get(op, (0, 0))
                totals[op] = (c + calls, i + cost)
            elif line.startswith("fn="):
                caller = name(line[3:].strip())
            elif line.startswith("cfn="):
                callee = name(line[4:].strip())
            elif line.startswith("calls="):
                op = ("malloc" if "CachingAllocator::malloc(" in callee
                      else "free" if "CachingAllocator::free(" in callee else None)
                if op and "CachingAllocator::" not in (caller or ""):
                    pending = (op, int(line[6:].split()[0]))
    if not totals:
        sys.exit(f"{path}: no calls into CachingAllocator::malloc/free")
    for op, (calls, ir) in sorted(totals.items()):
        print(f"{op}: {calls} calls, {ir} instructions, {ir / calls:.1f} per call")
    calls = sum(c for c, _ in totals.values())
    ir = sum(i for _, i in totals.values())
    print(f"operations: {calls}, instructions per operation: {ir / calls:.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: callgrind_alloc_ops.py CALLGRIND_OUT")
    main(sys.argv[1])
