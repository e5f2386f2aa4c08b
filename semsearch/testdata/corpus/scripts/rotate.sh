#!/bin/sh
# Rotate and compress the application's log files, keeping two weeks.
set -eu
dir=/var/log/app
keep=14

for f in "$dir"/*.log; do
	[ -s "$f" ] || continue
	mv "$f" "$f.$(date +%Y%m%d)"
	gzip -9 "$f.$(date +%Y%m%d)"
done

# delete compressed logs older than the retention period
find "$dir" -name '*.gz' -mtime +"$keep" -delete
systemctl kill -s HUP app
