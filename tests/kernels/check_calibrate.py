#!/usr/bin/env python3
"""ctest check of a compiled headroom-calibrate (CUDA or HIP build).

usage: check_calibrate.py CALIBRATE HEADROOM

--help documents every measurement and exits 0; a bad flag exits 2. Then a real run: on a machine
without a GPU (or driver) it must exit 3 with a clear message and write nothing; where a GPU is
present it must write a measured profile (with --quick) that `headroom fit` accepts.
"""
import os
import subprocess
import sys
import tempfile

calibrate, headroom = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=900)


def fail(what, r=None):
    print("FAIL:", what)
    if r is not None:
        print("exit", r.returncode, "\nstdout:", r.stdout, "\nstderr:", r.stderr)
    sys.exit(1)


h = run(calibrate, "--help")
if h.returncode != 0:
    fail("--help exits 0", h)
for measurement in ["device", "context", "granularity", "largest alloc", "malloc / free", "release cached",
                    "HBM bandwidth", "GEMM", "paged attention", "free_at_start_bytes", "largest_allocation_bytes",
                    "bandwidth_bytes_per_s", "dense_bf16_flops_per_s", "Exit codes"]:
    if measurement not in h.stdout:
        fail(f"--help documents '{measurement}'", h)

bad = run(calibrate, "--frobnicate")
if bad.returncode != 2 or "unknown argument '--frobnicate'" not in bad.stderr:
    fail("a bad flag exits 2 naming it", bad)

with tempfile.TemporaryDirectory() as d:
    profile = os.path.join(d, "gpu.yaml")
    r = run(calibrate, "--quick", "-o", profile)
    if r.returncode == 3:
        if "error: no GPU to measure" not in r.stderr or "no profile was written" not in r.stderr:
            fail("the no-GPU message", r)
        if os.listdir(d):
            fail("nothing is written without a GPU: found " + ", ".join(os.listdir(d)))
        print("no GPU here: exit 3 with:", r.stderr.strip())
    elif r.returncode == 0:
        f = run(headroom, "fit", profile)
        if f.returncode != 0:
            fail("headroom fit accepts the measured profile", f)
        print(f.stdout)
    else:
        fail("exit 0 (GPU) or 3 (no GPU)", r)
print("ok")
