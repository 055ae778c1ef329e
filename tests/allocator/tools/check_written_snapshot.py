"""Loads snapshots written by headroom's C++ writers with Python's own pickle and json modules and
checks that they hold the same data as the PyTorch original, in the shape PyTorch writes.

usage: check_written_snapshot.py SNAPSHOT_CONVERT DEFAULT_DATA_DIR OUT_DIR

Runs SNAPSHOT_CONVERT (tests/allocator/tools/snapshot_convert.cpp) on a real snapshot from the data
folder ($HEADROOM_DATA, else DEFAULT_DATA_DIR) to write OUT_DIR/written_snapshot.{pickle,json}. The pickles are loaded with an Unpickler whose find_class refuses every global, as snapshots
should always be. Exits 77 (ctest: skipped) when the original is missing, unless CI=true.
"""
import json
import os
import pickle
import pickletools
import subprocess
import sys

# Opcodes the memory viewer's own unpickler (torch/utils/viz/MemoryViz.js) understands.
VIEWER_OPCODES = {
    "PROTO", "FRAME", "APPEND", "APPENDS", "LIST", "TUPLE", "NEWFALSE", "NEWTRUE", "NONE", "BINGET",
    "BININT", "BININT1", "BININT2", "EMPTY_DICT", "EMPTY_LIST", "LONG1", "LONG_BINGET", "MARK",
    "MEMOIZE", "BINPUT", "LONG_BINPUT", "SETITEMS", "SETITEM", "DICT", "SHORT_BINUNICODE",
    "BINUNICODE", "STOP", "EMPTY_TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "BINFLOAT",
}
# Keys the C++ model does not keep (docs/allocator-model.md §6): stack frames, compile context,
# user metadata, top-level annotations.
DROPPED = {"frames", "compile_context", "user_metadata"}


class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")


def load(path):
    with open(path, "rb") as f:
        return DataOnly(f).load()


def normalise(snapshot, drop_default_pool=False):
    out = {"segments": [], "device_traces": [], "allocator_settings": snapshot.get("allocator_settings")}
    for seg in snapshot["segments"]:
        s = {k: v for k, v in seg.items() if k not in DROPPED and k != "blocks"}
        s["blocks"] = [{k: v for k, v in b.items() if k not in DROPPED} for b in seg["blocks"]]
        out["segments"].append(s)
    for trace in snapshot.get("device_traces", []):
        entries = []
        for e in trace:
            e = {k: v for k, v in e.items() if k not in DROPPED}
            if drop_default_pool and e.get("pool_id") == (0, 0):
                del e["pool_id"]
            entries.append(e)
        out["device_traces"].append(entries)
    return out


def tuples_to_lists(x):
    if isinstance(x, (list, tuple)):
        return [tuples_to_lists(v) for v in x]
    if isinstance(x, dict):
        return {k: tuples_to_lists(v) for k, v in x.items()}
    return x


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    convert, default_data, out_dir = sys.argv[1:4]
    data = os.environ.get("HEADROOM_DATA") or default_data
    original_path = os.path.join(data, "torch_snapshots", "cs336_magma27_train_step.pickle")
    pickle_path = os.path.join(out_dir, "written_snapshot.pickle")
    json_path = os.path.join(out_dir, "written_snapshot.json")
    if not os.path.exists(original_path):
        if os.environ.get("CI") == "true":
            fail(f"{original_path} is missing")
        print(f"SKIPPED: {original_path} is missing")
        sys.exit(77)
    for out in (pickle_path, json_path):
        subprocess.run([convert, original_path, out], check=True)

    with open(pickle_path, "rb") as f:
        data = f.read()
    ops = {op.name for op, _, _ in pickletools.genops(data)}
    if not ops <= VIEWER_OPCODES:
        fail(f"opcodes the memory viewer cannot read: {sorted(ops - VIEWER_OPCODES)}")
    if data[:2] != b"\x80\x04":
        fail("not a protocol-4 pickle")

    original = load(original_path)
    written = load(pickle_path)
    if list(written.keys())[:3] != ["segments", "device_traces", "allocator_settings"]:
        fail(f"top-level keys {list(written.keys())}")

    # PyTorch's shape: frames lists present and empty, pool ids as tuples, key order as PyTorch's.
    for seg in written["segments"]:
        if list(seg.keys()) != list(original["segments"][0].keys()):
            fail(f"segment keys {list(seg.keys())}")
        if seg["frames"] != [] or not isinstance(seg["segment_pool_id"], tuple):
            fail("segment frames/segment_pool_id not in PyTorch's shape")
        for b in seg["blocks"]:
            if list(b.keys()) != ["address", "size", "requested_size", "state", "frames"] or b["frames"] != []:
                fail(f"block keys {list(b.keys())}")
    for trace in written["device_traces"]:
        for e in trace:
            if e["frames"] != [] or not isinstance(e["pool_id"], tuple):
                fail("trace entry frames/pool_id not in PyTorch's shape")

    want = normalise(original)
    got = normalise(written, drop_default_pool=True)
    if got != want:
        for key in want:
            if got[key] != want[key]:
                fail(f"'{key}' differs from the original")
        fail("differs from the original")

    with open(json_path) as f:
        from_json = json.load(f)
    if normalise(from_json, drop_default_pool=False) != tuples_to_lists(normalise(written)):
        fail("the JSON form differs from the pickle form")

    n_blocks = sum(len(s["blocks"]) for s in written["segments"])
    n_events = sum(len(t) for t in written["device_traces"])
    print(f"OK: {len(written['segments'])} segments, {n_blocks} blocks, {n_events} trace entries; "
          f"opcodes {sorted(ops)}")


if __name__ == "__main__":
    main()
