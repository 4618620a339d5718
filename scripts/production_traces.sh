#!/bin/sh
# Regenerates examples/traces/production.jsonl.gz, the example trace file `make demo` scores
# against scenarios/policies.yaml (docs/production-traces.md): the real demo agents (LangGraph,
# real tools, the built-in demo model and the scripted mistakes of scenarios/*.yaml) run every
# shipped scenario six times, each run's spans written by the harness's OTLP exporter. The
# scenarios' expectations are not what this file is for (exit code 1 from the failing
# scenarios is expected): their traces stand in for a day of production requests, some of
# which break the policies.
#
#   sh scripts/production_traces.sh [HARNESS]     (default: .venv/bin/harness)
set -eu
harness=${1:-.venv/bin/harness}
out=examples/traces/production.jsonl
mkdir -p examples/traces
rm -f "$out" "$out.gz"
"$harness" run scenarios/ --repeat 6 -q --trace-file "$out" || test $? -eq 1
gzip -9 -n "$out"
echo "wrote $out.gz"
