# SPANK header features that differ between Slurm releases (issue 12).
# Slurm 25.05+ headers define ESPANK_JOB_FAILURE (an enum value, so the C
# preprocessor cannot see it): a compile probe decides whether the plugin
# declares slurm_spank_init_failure_mode (spank/numaguard.c). 22.05 and
# 24.11 headers lack it; the probe costs one compiler run per make.
ifeq ($(HAVE_SPANK),1)
NG_SPANK_FAILURE_MODE := $(shell printf '\043include <slurm/spank.h>\nint m = ESPANK_JOB_FAILURE;\n' | \
    $(CC) -x c -fsyntax-only -I$(SLURM_INCLUDE) - >/dev/null 2>&1 && echo 1)
ifeq ($(NG_SPANK_FAILURE_MODE),1)
NG_CFLAGS += -DNG_HAVE_SPANK_FAILURE_MODE=1
endif
endif
