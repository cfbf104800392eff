#!/usr/bin/env bash
# Replays every round-0 blind fix against the checks of a given commit:
# a fresh worktree per fix, the diff applied with fuzz, the exercise's check run.
# Usage: replay.sh COMMIT OUT.tsv
set -u
commit=$1; out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
: >"$out"
for d in "$here"/round0/*.diff; do
	base=$(basename "$d" .diff); ex=${base%%__*}; fix=${base#*__}
	wt=/tmp/replay-wt
	git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt"
	git -C "$repo" worktree add --detach "$wt" "$commit" >/dev/null 2>&1
	if ! (cd "$wt" && patch -p1 -s -F3 <"$d" >/dev/null 2>&1); then
		printf '%s\t%s\tdid-not-apply\t\n' "$ex" "$fix" >>"$out"; continue
	fi
	start=$(date +%s)
	res=$(cd "$wt" && timeout 300 nice go test ./checks -exercise="$ex" -count=1 2>&1)
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then verdict=ACCEPTED
	elif [ $rc -eq 124 ]; then verdict=TIMEOUT
	elif echo "$res" | grep -q '^panic:'; then verdict=PANIC
	else verdict=REJECTED; fi
	first=$(echo "$res" | grep -m1 -E '✗' | tr -s ' ' | cut -c1-100)
	printf '%s\t%s\t%s\t%s\t%ss\n' "$ex" "$fix" "$verdict" "$first" "$secs" >>"$out"
done
git -C "$repo" worktree remove --force /tmp/replay-wt >/dev/null 2>&1
