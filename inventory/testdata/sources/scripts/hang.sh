#!/bin/sh
# Never answers (a child holds stdout open too).
sleep 60 &
sleep 60
