#!/bin/sh
echo '["a", "b"]'
