#!/usr/bin/env bash
# fuzz.sh: run the Go fuzz targets of the repository one at a time, each for
# a fixed time, and print a summary table (issue #17: no input found in 60 s
# of fuzzing per target may crash a reader).
#
# Usage: scripts/fuzz.sh [DURATION] [PATTERN]
#        scripts/fuzz.sh --list [PATTERN]
#
#   --list    print the targets that would run, one "DIR NAME" a line, and
#             exit.
#   DURATION  the -fuzztime of each target: a duration (60s, 5m) or a number
#             of executions (10000x). Default 60s. Go counts the replay of
#             the corpus cached by earlier runs in it ("gathering baseline
#             coverage"): on a slow target with a large cache that can take
#             most of a short duration (the table says so).
#   PATTERN   only the targets whose "package-dir.FuzzName" (for example
#             "./train.FuzzReadManifest") matches this extended regular
#             expression (grep -E). Default: every target.
#
# Environment:
#   FUZZ_MINIMIZE   -fuzzminimizetime (default 10s). Go minimizes every new
#                   interesting input as well as a failing one; on the slow
#                   targets (training a forest, drawing plots) its default of
#                   60s per input leaves little time for fuzzing.
#   FUZZ_PARALLEL   -parallel, the fuzzing workers (default: Go's, GOMAXPROCS).
#   FUZZ_TIMEOUT    -timeout of each go test (default 20m).
#   FUZZ_KERNELS=1  also run the kernel checks excluded below.
#   FUZZ_LOGS       folder for each target's go test output (default: a new
#                   temporary folder, printed at the end).
#
# Targets are found with grep (every "func FuzzX(" in a *_test.go file), so
# new ones are picked up without editing this script. Excluded unless
# FUZZ_KERNELS=1: cpubackend (gotrain's fork of GoMLX's simplego backend; its
# targets are upstream's) and gemm's FuzzSgemm (it compares the SGEMM kernels
# with a reference on fuzzed shapes: a numerical kernel check, not a reader of
# files or user-supplied bytes).
#
# A failing target leaves its input where go test writes it,
# PKG/testdata/fuzz/FuzzX/HASH, named in the table (CRASH); rerun it with
# go test ./PKG -run=FuzzX/HASH. A crasher kept there fails its target at
# once, before any fuzzing, until the bug is fixed; the table names it. The script exits 1 if any target fails
# (a crasher, or a target that does not build), 0 otherwise. Fuzzing
# caches its corpus under $(go env GOCACHE)/fuzz, outside the repository.
# This is a local check: it is not part of .ci/run.
set -euo pipefail

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
	set -- 60s "$@"
fi
duration=${1:-60s}
pattern=${2:-}
minimize=${FUZZ_MINIMIZE:-10s}
timeout=${FUZZ_TIMEOUT:-20m}
kernels=${FUZZ_KERNELS:-0}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

logs=${FUZZ_LOGS:-}
if [ -z "$logs" ]; then
	logs=$(mktemp -d "${TMPDIR:-/tmp}/gotrain-fuzz.XXXXXX")
fi
mkdir -p "$logs"

# Every target as "DIR NAME", DIR relative to the root ("./train").
targets=$(
	grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . |
		sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*$|\1 \2|' |
		sort -u
)

selected=()
while read -r dir name; do
	[ -n "$dir" ] || continue
	if [ "$kernels" != 1 ]; then
		case "$dir" in
		./cpubackend | ./cpubackend/*) continue ;;
		esac
		if [ "$dir" = ./gemm ] && [ "$name" = FuzzSgemm ]; then
			continue
		fi
	fi
	if [ -n "$pattern" ] && ! printf '%s\n' "$dir.$name" | grep -Eq -- "$pattern"; then
		continue
	fi
	selected+=("$dir $name")
done <<<"$targets"

if [ "${#selected[@]}" -eq 0 ]; then
	echo "fuzz.sh: no fuzz target matches ${pattern:-(all)}" >&2
	exit 1
fi

if [ "$list" = 1 ]; then
	printf '%s\n' "${selected[@]}"
	exit 0
fi

opts=(-run='^$' -fuzztime="$duration" -fuzzminimizetime="$minimize" -timeout="$timeout")
if [ -n "${FUZZ_PARALLEL:-}" ]; then
	opts+=(-parallel="$FUZZ_PARALLEL")
fi

echo "fuzz.sh: ${#selected[@]} targets, $duration each (minimize $minimize); logs in $logs"
results=()
failed=0
for t in "${selected[@]}"; do
	dir=${t% *}
	name=${t#* }
	log="$logs/$(printf '%s' "${dir#./}" | tr '/' '_').$name.log"
	echo "== $dir $name"
	start=$(date +%s)
	rc=0
	go test "${opts[@]}" -fuzz="^${name}\$" "$dir" >"$log" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	# The last progress line's count: "fuzz: elapsed: 1m0s, execs: 12345 (206/sec), ...".
	execs=$(sed -nE 's/^fuzz: elapsed: [^,]*, execs: ([0-9]+).*/\1/p' "$log" | tail -n 1)
	crasher=$(sed -nE 's/^[[:space:]]*Failing input written to (.*)$/\1/p' "$log" | tail -n 1)
	if [ -n "$crasher" ]; then
		crasher="$dir/$crasher"
	else
		# A failing entry of the corpus already there (a crasher kept in
		# testdata/fuzz, or a seed of f.Add, "seed#N").
		entry=$(sed -nE 's/^failure while testing seed corpus entry: [^/]*\/(.*)$/\1/p' "$log" | tail -n 1)
		if [ -n "$entry" ] && [ -f "$dir/testdata/fuzz/$name/$entry" ]; then
			crasher="$dir/testdata/fuzz/$name/$entry (already in the corpus)"
		elif [ -n "$entry" ]; then
			crasher="seed corpus entry $entry"
		fi
	fi
	if [ "$rc" -eq 0 ]; then
		result=PASS
		note=
		if ! grep -q 'now fuzzing with' "$log"; then
			# -fuzztime counts the replay of the cached corpus too.
			note="no new input: the time went to replaying the corpus"
		fi
	else
		failed=$((failed + 1))
		if [ -n "$crasher" ]; then
			result=CRASH
			note=$crasher
		elif grep -q -- '--- FAIL' "$log"; then
			result=FAIL
			note="see $log"
		else
			result=ERROR
			note="go test exit $rc; see $log"
		fi
		tail -n 20 "$log" | sed 's/^/    /'
	fi
	results+=("$dir.$name|$result|${execs:--}|${secs}s|$note")
done

echo
printf '%-46s %-6s %12s %7s  %s\n' TARGET RESULT EXECS TIME NOTE
for r in "${results[@]}"; do
	IFS='|' read -r target result execs secs note <<<"$r"
	printf '%-46s %-6s %12s %7s  %s\n' "$target" "$result" "$execs" "$secs" "$note"
done
echo
echo "fuzz.sh: ${#selected[@]} targets, $failed failed; logs in $logs"
if [ "$failed" -gt 0 ]; then
	exit 1
fi
