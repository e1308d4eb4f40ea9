#!/bin/sh
# The probe command's usage errors: clear messages, perf-like exit codes.
. "$(dirname "$0")/lib.sh"
plan 9
"$PROBE" -h >"$T/out" 2>&1; is "$?" 0 "probe -h exits 0"
grep -q 'record' "$T/out"; ok $? "help names the record command"
"$PROBE" frobnicate >"$T/out" 2>&1; is "$?" 2 "unknown command exits 2"
grep -q '^probe: ' "$T/out"; ok $? "and says so: $(head -n1 "$T/out")"
"$PROBE" record -o "$T/x" >"$T/out" 2>&1; is "$?" 2 "record without a command exits 2"
"$PROBE" record -F abc -- true >"$T/out" 2>&1; is "$?" 2 "record -F abc exits 2"
"$PROBE" record -q -o "$T/x" -- /nonexistent/cmd >"$T/out" 2>&1; is "$?" 127 "a command that does not exist exits 127"
grep -q 'nonexistent' "$T/out"; ok $? "and is named: $(head -n1 "$T/out")"
"$PROBE" report --format nope "$T/x" >"$T/out" 2>&1; is "$?" 2 "unknown report format exits 2"
done_testing
