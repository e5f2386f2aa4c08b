#!/bin/sh
# Creates, under $HOME, the files the example plans work on, so that each
# can run on a test host. Safe to run again: it resets them.
set -eu
mkdir -p "$HOME/test" "$HOME/app"
printf '#!/bin/sh\necho 1\n' > "$HOME/test/a.sh"
chmod +x "$HOME/test/a.sh"
printf '2024-01-01 10:00:00 INFO start\n2024-01-01 10:00:01 ERROR disk full\n2024-01-01 10:00:02 INFO retry\n2024-01-01 10:00:03 ERROR disk still full\n' > "$HOME/app.log"
rm -f "$HOME/errors.txt"
printf 'name: app\ndebug: false\nport: 8080\n' > "$HOME/app/config.yaml"
# The stand-in service restart: records that it ran and prints what it did.
cat > "$HOME/app/restart.sh" <<'SH'
#!/bin/sh
date +%s > "$HOME/app/restarted"
echo "app restarted"
SH
chmod +x "$HOME/app/restart.sh"
