#!/bin/sh
# The numaguard CLI: exact plans for real topologies, JSON shape, errors.
exec python3 "$(dirname "$0")/cli_cases.py"
