#!/usr/bin/env bash
# Calls every bound function of an API once (test/cpu/helpers/call-every-function.ts), going on
# past each call that kills the process, and prints the calls that did: `crash <function> <signal>`.
#   tools/find-crashers.sh runtime|driver
api=${1:-runtime}
after=()
for i in $(seq 1 60); do
  out=$(node --import tsx test/cpu/helpers/call-every-function.ts "$api" "${after[@]}" 2>/dev/null); rc=$?
  [ $rc -eq 0 ] && { echo "done $api: $(grep -c '"name"' <<<"$out") calls after the last crash"; exit 0; }
  last=$(grep -o '"start":"[^"]*"' <<<"$out" | tail -1 | cut -d'"' -f4)
  [ -z "$last" ] && { echo "no progress (exit $rc)"; exit 1; }
  echo "crash $last exit $rc"
  after=(--after "$last")
done
