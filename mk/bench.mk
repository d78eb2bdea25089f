# make bench: benchmarks against the alternatives; regenerates
# docs/performance.md (bench/run.sh). Takes minutes, starts a private Slurm;
# never part of make check.
bench:
	@BUILD=$(if $(filter command line,$(origin BUILD)),$(BUILD),build-bench) bash bench/run.sh
