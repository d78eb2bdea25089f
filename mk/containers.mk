# The container suite's stand-in for pyxis (tests/slurm/fake_pyxis.c): a
# SPANK plugin the tests load before or after numaguard; never installed.
$(BUILD)/tests/fake_pyxis.so: tests/slurm/fake_pyxis.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NG_CFLAGS) -shared -I$(SLURM_INCLUDE) -o $@ $<

tests: $(if $(HAVE_SPANK),$(BUILD)/tests/fake_pyxis.so)
