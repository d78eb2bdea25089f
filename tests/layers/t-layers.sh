#!/bin/sh
# The layer check (tests/layers/layers.py): no circle between source files,
# no call from a lower layer to a higher one, adapters on the public API
# only, every library global public (ng_*) or internal (ngi_*), every
# public function used by an adapter or documented for library users.
# Reads the objects of $BUILD (make all first). `make check-layers` runs it.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 2
BUILD=$BUILD exec python3 tests/layers/layers.py
