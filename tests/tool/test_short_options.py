# SPDX-License-Identifier: Apache-2.0
"""One set of short options: every command's --help shows a long option with the same letter
(-b backend, -d device, -f format, -o output, -r repeats, -w warm-up, -s size, -t targets,
-q quiet, -h help), no letter means two things, and the letters work in run, bench and plot."""
import json
import os
import re

from tool_checks import expect, parse_args, run

args = parse_args()
COMMANDS = ["run", "compare", "bench", "calibrate", "plot", "diff", "list"]
EXPECTED = {"backend": "b", "device": "d", "format": "f", "output": "o", "repeats": "r", "warmup": "w",
            "size": "s", "targets": "t", "quiet": "q", "help": "h"}

letter_of = {}   # long option -> (letter, the command that showed it first)
option_of = {}   # letter -> (long option, the command that showed it first)
for command in COMMANDS:
    text = run(args.tool, [command, "--help"]).stdout
    pairs = re.findall(r"^\s+-(\w) \[ --([\w-]+) \]", text, re.MULTILINE)
    expect(pairs, "%s --help shows no short option:\n%s" % (command, text))
    for letter, name in pairs:
        if name in letter_of:
            expect(letter_of[name][0] == letter, "--%s is -%s in %s but -%s in %s"
                   % (name, letter_of[name][0], letter_of[name][1], letter, command))
        letter_of.setdefault(name, (letter, command))
        if letter in option_of:
            expect(option_of[letter][0] == name, "-%s is --%s in %s but --%s in %s"
                   % (letter, option_of[letter][0], option_of[letter][1], name, command))
        option_of.setdefault(letter, (name, command))
expect({name: letter for name, (letter, _) in letter_of.items()} == EXPECTED,
       "short options: %r" % {name: letter for name, (letter, _) in letter_of.items()})
# The options every measuring command shares carry their letter in each of them.
for command, names in (("run", ["backend", "device", "format", "output", "repeats", "warmup", "size", "quiet"]),
                       ("compare", ["backend", "device", "format", "output", "repeats", "warmup", "size", "quiet"]),
                       ("bench", ["backend", "device", "format", "output", "repeats", "warmup", "targets", "quiet"]),
                       ("calibrate", ["backend", "device", "format"])):
    text = run(args.tool, [command, "--help"]).stdout
    for name in names:
        expect("-%s [ --%s ]" % (EXPECTED[name], name) in text, "%s --help lacks -%s [ --%s ]"
               % (command, EXPECTED[name], name))

# The letters at work: run and bench with the same ones.
out = os.path.join(args.workdir, "run.json")
run(args.tool, ["run", "roundtrip", "-b", "host", "-d", "0", "-s", "64KiB", "-r", "2", "-w", "0", "-f", "json",
                "-o", out, "-q"])
with open(out) as f:
    result = json.load(f)["results"][0]
expect(result["backend"] == "host" and result["parameters"]["size"] == 65536, "run: %r" % result["parameters"])
h2d = [f for f in result["figures"] if f["name"] == "h2d"]
expect(h2d and h2d[0]["samples"] == 2, "run -r 2: %r" % h2d)
out = os.path.join(args.workdir, "bench.json")
run(args.tool, ["bench", "-b", "host", "-t", "host-raw-*", "-d", "0", "-r", "2", "-w", "0", "-f", "json", "-o", out,
                "-q"])
with open(out) as f:
    bench = json.load(f)["bench"]
expect(bench["repeats"] == 2 and bench["warmup"] == 0 and bench["targets"], "bench: %r" % {
    k: bench.get(k) for k in ("repeats", "warmup")})
expect(all(t["target"].startswith("host-raw-") for t in bench["targets"]), "bench -t: %r" % [t["target"] for t in bench["targets"]])
print("ok")
