#!/usr/bin/env bash
# Replays a round's blind fixes against the checks of a given commit:
# a fresh worktree per fix, the diff applied, the exercise's check run.
#
# Usage: replay.sh ROUND_DIR COMMIT OUT.tsv [FIX...]
#        replay.sh COMMIT OUT.tsv [FIX...]          (round0, as before)
# ROUND_DIR is a directory of <exercise>__<fix>.diff (round0, round1, or a
# path). FIX is <exercise>__<fix> (or <exercise>/<fix>); with none given,
# every diff of the round is replayed. OUT.tsv is appended to, one row a fix:
#   exercise  fix  verdict  guarantees  first-line  seconds  applied
# verdict: ACCEPTED, REJECTED, TIMEOUT (the check hung), PANIC, or
# did-not-apply; guarantees: the names of the ✗ lines in order, six, then
# +N for the rest; first-line: the first ✗ (or panic) line; seconds: the
# check's run alone (its test binary is built first, untimed); applied:
# clean, fuzz (only with patch -F3) or did-not-apply.
# REPLAY_TIMEOUT (seconds, default 300) bounds each check's run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 ROUND_DIR COMMIT OUT.tsv [FIX...]" >&2; exit 2; }
if [ -d "$1" ]; then round=$(cd "$1" && pwd); shift
elif [ -d "$here/$1" ]; then round=$here/$1; shift
else round=$here/round0; fi
[ $# -ge 2 ] || { echo "usage: $0 ROUND_DIR COMMIT OUT.tsv [FIX...]" >&2; exit 2; }
commit=$1; out=$(realpath -m "$2"); shift 2
limit=${REPLAY_TIMEOUT:-300}
repo=$(git -C "$here" rev-parse --show-toplevel)
touch "$out"

if [ $# -gt 0 ]; then
	diffs=()
	for f in "$@"; do
		f=${f%.diff}; f=${f/\//__}
		[ -f "$round/$f.diff" ] || { echo "no $round/$f.diff" >&2; exit 2; }
		diffs+=("$round/$f.diff")
	done
else
	diffs=("$round"/*.diff)
fi

wt=$(mktemp -d /tmp/replay-wt.XXXXXX)
trap 'git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt"' EXIT
for d in "${diffs[@]}"; do
	base=$(basename "$d" .diff); ex=${base%%__*}; fix=${base#*__}
	git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt"
	git -C "$repo" worktree add --detach "$wt" "$commit" >/dev/null 2>&1 || { echo "cannot check out $commit" >&2; exit 1; }
	if (cd "$wt" && patch -p1 -s -F0 --dry-run <"$d" >/dev/null 2>&1); then applied=clean
	elif (cd "$wt" && patch -p1 -s -F3 --dry-run <"$d" >/dev/null 2>&1); then applied=fuzz
	else
		printf '%s\t%s\tdid-not-apply\t\t\t\tdid-not-apply\n' "$ex" "$fix" >>"$out"; continue
	fi
	(cd "$wt" && patch -p1 -s -F3 --no-backup-if-mismatch <"$d" >/dev/null 2>&1)
	if ! res=$(cd "$wt" && nice go test -c -o "$wt/checks/checks.test" ./checks 2>&1); then
		first=$(echo "$res" | grep -m1 -v '^#' | tr -s ' \t' ' ' | cut -c1-100)
		printf '%s\t%s\tREJECTED\t(does not compile)\t%s\t\t%s\n' "$ex" "$fix" "$first" "$applied" >>"$out"; continue
	fi
	start=$(date +%s)
	res=$(cd "$wt/checks" && timeout "$limit" nice ./checks.test -test.count=1 -test.timeout=0 -exercise="$ex" 2>&1)
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then verdict=ACCEPTED
	elif [ $rc -eq 124 ]; then verdict=TIMEOUT
	elif echo "$res" | grep -q '^panic:'; then verdict=PANIC
	else verdict=REJECTED; fi
	names=$(echo "$res" | grep -E '^ +✗ ' | awk '{print $2}' | awk '!seen[$0]++ {n++; if (n <= 6) l = l (n > 1 ? "," : "") $0} END {if (n > 6) l = l ",+" n-6; print l}')
	first=$(echo "$res" | grep -m1 -E '✗|^panic:' | tr -s ' \t' ' ' | cut -c1-100)
	printf '%s\t%s\t%s\t%s\t%s\t%ss\t%s\n' "$ex" "$fix" "$verdict" "$names" "$first" "$secs" "$applied" >>"$out"
done
