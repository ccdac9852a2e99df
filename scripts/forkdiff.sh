#!/usr/bin/env bash
# forkdiff.sh: the diff of cpubackend, gotrain's fork of GoMLX's
# backends/simplego, against the upstream version it was forked from.
#
# Usage: scripts/forkdiff.sh [--summary | --check] [FILE...]
#
#   (no flag)  per-file unified diffs (upstream -> fork), then the summary
#   --summary  the summary only
#   --check    the summary only; exits 1 if a changed region of an
#              upstream-derived, non-generated file carries no "gotrain:"
#              comment among its added lines, or if a file of cpubackend is
#              not listed in cpubackend/UPSTREAM.md. A changed region is a
#              hunk of "diff -U1": changes at most two unchanged lines apart
#              are one region.
#   FILE...    only these files (paths relative to cpubackend/, e.g. exec.go
#              or internal/cmd/simplego_dispatcher/main.go)
#
# The upstream version is the "version:" line of cpubackend/UPSTREAM.md; its
# source is read from the Go module cache ("go env GOMODCACHE"), downloaded
# with "go mod download" if it is not there. Upstream files are compared after
# renaming "package simplego" to "package cpubackend", so that line is no
# difference.
#
# Pairs compared (same name on both sides):
#   cpubackend/F                 <-> backends/simplego/F
#   cpubackend/LICENSE           <-> LICENSE (the module's root)
#   cpubackend/internal/cmd/D/F  <-> internal/cmd/D/F (simplego's generators)
# Files that start with Go's "// Code generated ... DO NOT EDIT." line are
# reported as generated: their differences come from the generators, whose
# own changes are marked.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=diff
case "${1:-}" in
--summary) mode=summary; shift ;;
--check) mode=check; shift ;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac

fork=cpubackend
meta=$fork/UPSTREAM.md
module=$(sed -n 's/^module: *//p' "$meta" | head -1)
version=$(sed -n 's/^version: *//p' "$meta" | head -1)
subdir=$(sed -n 's/^path: *//p' "$meta" | head -1)
if [ -z "$module" ] || [ -z "$version" ] || [ -z "$subdir" ]; then
	echo "forkdiff: $meta needs 'module:', 'version:' and 'path:' lines" >&2
	exit 2
fi

upstream="$(go env GOMODCACHE)/$module@$version"
if [ ! -d "$upstream" ]; then
	go mod download "$module@$version" >&2
fi
if [ ! -d "$upstream/$subdir" ]; then
	echo "forkdiff: upstream $upstream/$subdir not found" >&2
	exit 2
fi

# upstream_of FORKFILE: prints the upstream path of a fork file, or nothing.
upstream_of() {
	local f=$1
	case "$f" in
	LICENSE) echo "$upstream/LICENSE" ;;
	internal/cmd/*) [ -f "$upstream/$f" ] && echo "$upstream/$f" ;;
	*/*) ;;
	*) [ -f "$upstream/$subdir/$f" ] && echo "$upstream/$subdir/$f" ;;
	esac
	return 0
}

normalise() { sed 's/^package simplego$/package cpubackend/' "$1"; }

is_generated() { grep -qE '^// Code generated .* DO NOT EDIT\.$' "$1"; }

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(cd $fork && git ls-files --cached --others --exclude-standard . | sort)
fi

status=0
derived=()
own=()
rows=()
unmarked_list=()
total_add=0 total_del=0 total_unmarked=0
for f in "${files[@]}"; do
	[ -f "$fork/$f" ] || { echo "forkdiff: no file $fork/$f" >&2; status=1; continue; }
	up=$(upstream_of "$f")
	if [ -z "$up" ]; then
		own+=("$f")
		continue
	fi
	derived+=("$f")
	if [ "$mode" = diff ]; then
		diff -u --label "upstream/$f" --label "$fork/$f" <(normalise "$up") "$fork/$f" || true
	fi
	# Changed regions: the hunks of diff -U1, so changes at most two
	# unchanged lines apart are one region.
	u1=$(diff -U1 <(normalise "$up") "$fork/$f" | tail -n +3 || true)
	add=$(grep -c '^+' <<<"$u1" || true)
	del=$(grep -c '^-' <<<"$u1" || true)
	hunks=$(grep -c '^@@' <<<"$u1" || true)
	if [ "$hunks" -eq 0 ]; then
		kind=identical
		unmarked=0
	elif is_generated "$fork/$f"; then
		kind=generated
		unmarked=0
	else
		kind=modified
		# Regions whose added lines contain no "gotrain:".
		unmarked=$(awk '
			/^@@/ { if (h != "" && !m) { n++; list = list "\n  " h } ; h = $0; m = 0; next }
			/^\+/ && /gotrain:/ { m = 1 }
			END { if (h != "" && !m) { n++; list = list "\n  " h }; printf "%d%s", n, list }
		' <<<"$u1")
	fi
	n_unmarked=${unmarked%%$'\n'*}
	if [ "$n_unmarked" -gt 0 ]; then
		status=1
		unmarked_list+=("$f:${unmarked#*$'\n'}")
	fi
	total_add=$((total_add + add))
	total_del=$((total_del + del))
	total_unmarked=$((total_unmarked + n_unmarked))
	rows+=("$(printf '%-48s %-10s %5s %5s %5s %8s' "$f" "$kind" "+$add" "-$del" "$hunks" "$n_unmarked")")
done

echo
echo "== forkdiff: $fork against $module@$version/$subdir"
printf '%-48s %-10s %5s %5s %5s %8s\n' file status added rmved hunks unmarked
printf '%s\n' "${rows[@]}"
printf '%-48s %-10s %5s %5s %5s %8s\n' "total (${#derived[@]} upstream-derived files)" "" "+$total_add" "-$total_del" "" "$total_unmarked"
if [ "${#unmarked_list[@]}" -gt 0 ]; then
	echo
	echo "changed regions without a gotrain: comment:"
	printf '%s\n' "${unmarked_list[@]}"
fi

if [ $# -eq 0 ]; then
	echo
	echo "gotrain's own files (${#own[@]}, no upstream counterpart):"
	printf '  %s\n' "${own[@]}"
	echo
	echo "upstream $subdir files not in the fork:"
	for u in "$upstream/$subdir"/*; do
		b=$(basename "$u")
		[ -e "$fork/$b" ] || echo "  $b"
	done
	# Every file of the fork is listed in UPSTREAM.md.
	for f in "${derived[@]}" "${own[@]}"; do
		if ! grep -qF "\`$f\`" "$meta"; then
			echo "forkdiff: $f is not listed in $meta" >&2
			status=1
		fi
	done
fi

if [ "$mode" = check ]; then
	if [ $status -eq 0 ]; then echo; echo "forkdiff --check: ok"; fi
	exit $status
fi
exit 0
