# make check-hwloc-next: numaguard built against the next hwloc (3.0, the
# vendored snapshot ../shared/vendor/hwloc-master-*.tar.gz, built under
# $(BUILD)/hwloc-next/), its unit and CLI suites, and topo/plan/exec over
# the whole corpus compared with this hwloc 2.x build
# (tests/hwloc-next/check-hwloc-next.sh; docs/testing.md, "hwloc 3.0").
.PHONY: check-hwloc-next
check-hwloc-next: all
	@BUILD=$(BUILD) sh tests/hwloc-next/check-hwloc-next.sh
