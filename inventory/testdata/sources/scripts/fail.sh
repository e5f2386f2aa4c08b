#!/bin/sh
echo 'cannot reach the CMDB: connection refused' >&2
exit 1
