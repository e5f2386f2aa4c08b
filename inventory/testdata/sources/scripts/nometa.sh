#!/bin/sh
# An inventory script without _meta: agent asks --host for each host.
case "$1" in
--list) printf '{"app": {"hosts": ["app1", "app2"], "vars": {"svc": "api"}}, "solo": {"a": 1}}\n' ;;
--host) case "$2" in
  app1) printf '{"ansible_host": "192.0.2.1", "n": 1}\n' ;;
  *) printf '{}\n' ;;
  esac ;;
*) exit 2 ;;
esac
