# make plan-quality: placement quality of the planner over the corpus x job
# shapes, this tree against the previous release's planner (built from git
# at run time), and the plan time for 64 tasks (bench/quality.sh). Its
# figures are the ones in docs/planner.md. Not part of make check.
.PHONY: plan-quality
plan-quality:
	@BUILD=$(BUILD) sh bench/quality.sh
