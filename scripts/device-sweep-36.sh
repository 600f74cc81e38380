#!/bin/bash
# One device call for issue 36 (deliverables 4, 5): SASS of the scoped operations, the padding
# experiment, and mutation runs before (0.3 s per mutant, one configuration) and after (--portfolio)
# with one binary. Build it here first: cargo build --release -p scopecheck; mkdir -p dev-bin;
# cp target/release/scopecheck dev-bin/ && strip dev-bin/scopecheck; carry dev-bin. Tables:
# scripts/mutation-table.py $OUT/mut-ex-after.jsonl (and the before log).
B=./dev-bin/scopecheck
set -x
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
(ptxas -arch=sm_90 scripts/scoped-ops.ptx -o /tmp/sass.cubin && cuobjdump -sass /tmp/sass.cubin) > $OUT/sass.txt 2>&1
$B caps >> $OUT/gpu.txt 2>&1
timeout 45 bash -c "nvcc -O3 -arch=sm_90 -o /tmp/pad scripts/padding-experiment.cu && /tmp/pad" > $OUT/padding.csv 2>&1 
date +%s > $OUT/times.txt
timeout -s INT -k 15 75 $B run --mutants --json --time 0.3s examples > $OUT/mut-ex-before.jsonl 2>> $OUT/err.txt
date +%s >> $OUT/times.txt
timeout -s INT -k 15 150 $B run --mutants --portfolio --json --time 2s examples > $OUT/mut-ex-after.jsonl 2>> $OUT/err.txt
date +%s >> $OUT/times.txt
timeout -s INT -k 15 50 $B run --mutants --portfolio --json --time 1s tests/litmus/ptx > $OUT/mut-lit.jsonl 2>> $OUT/err.txt
date +%s >> $OUT/times.txt
