# SPDX-License-Identifier: Apache-2.0
"""--trace: Chrome Trace Event JSON, one process per backend and one track (tid) per stream."""
import json
import os

from tool_checks import SMALL, expect, parse_args, run

args = parse_args()
path = os.path.join(args.workdir, "trace.json")
run(args.tool, ["run", "all", "--backend", "host", "--trace", path] + SMALL)
with open(path) as f:
    trace = json.load(f)
events = trace["traceEvents"]
expect(isinstance(events, list) and events, "no traceEvents")
for e in events:
    for key in ("ph", "ts", "dur", "pid", "tid", "name"):
        expect(key in e, "event lacks %s: %r" % (key, e))
    expect(e["dur"] >= 0, "negative duration: %r" % e)
    expect(e["ts"] >= 0, "negative timestamp: %r" % e)
complete = [e for e in events if e["ph"] == "X"]
meta = [e for e in events if e["ph"] == "M"]
expect(all(e["ph"] in ("X", "M") for e in events), "unexpected phases")
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
processes = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
expect(list(processes.values()) == ["xfer host (device 0)"], "processes: %r" % processes)
expect(len(set(threads.values())) == len(threads), "two tids share a track name: %r" % threads)
for e in complete:
    expect((e["pid"], e["tid"]) in threads, "event on an unnamed track: %r" % e)
names = set(threads.values())
for track in ("stream 0", "stream 1", "stream 2", "stream 3", "serial stream", "host"):
    expect(track in names, "no track %s (tracks: %r)" % (track, sorted(names)))
cats = {e["cat"] for e in complete}
expect({"copy", "kernel", "host"} <= cats, "categories: %r" % cats)
workflows = {e["args"]["workflow"] for e in complete}
expect(workflows == {"roundtrip", "sync-async", "bandwidth", "vector-add", "overlap", "batching", "access"},
       "workflows in the trace: %r" % workflows)
# The pipelined overlap pass uses all three of its streams.
overlap_tracks = {threads[(e["pid"], e["tid"])] for e in complete
                  if e["args"]["workflow"] == "overlap" and e["name"].startswith("pipelined")}
expect(overlap_tracks == {"stream 1", "stream 2", "stream 3"}, "pipelined tracks: %r" % overlap_tracks)
# Copies carry their size; every span names its workflow.
expect(all(e["args"].get("bytes", 0) > 0 for e in complete if e["cat"] == "copy"), "a copy span without bytes")
print("ok: %d events on %d tracks" % (len(complete), len(threads)))
