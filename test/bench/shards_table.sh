#!/bin/sh
# The write-rate table of docs/shards.md, from `leaderd -n` (config_shards_rate).
# Run from the top of the tree after make: sh test/bench/shards_table.sh
L=${LEADERD:-./leaderd}
t=$(mktemp)
echo "| shards | durations (lease/renew/retry) | 1 member | 3 members | 8 members | N members | unforced |"
echo "|---|---|---|---|---|---|---|"
for d in "15s 10s 2s" "30s 20s 5s" "60s 40s 10s"; do
  set -- $d
  for n in 4 16 64 256; do
    printf 'identity: w-0\nlock: {namespace: default}\nlease_duration: %s\nrenew_deadline: %s\nretry_period: %s\nshards: {group: g, count: %s, force: true}\n' $1 $2 $3 $n > $t
    line=$($L -n -f $t | grep "API writes") || {
      echo "shards_table: $L -n found no write rate for $n shards at $d" >&2
      exit 1
    }
    printf 'identity: w-0\nlock: {namespace: default}\nlease_duration: %s\nrenew_deadline: %s\nretry_period: %s\nshards: {group: g, count: %s}\n' $1 $2 $3 $n > $t
    if $L -n -f $t >/dev/null 2>&1; then ok=yes; else ok=refused; fi
    echo "$line" | sed -E "s/.*: ([0-9.]+) with 1 member, ([0-9.]+) with 3 members, ([0-9.]+) with 8 members, ([0-9.]+) with ([0-9]+).*/| $n | $1\/$2\/$3 | \1 | \2 | \3 | \4 | $ok |/"
  done
done
rm -f $t
