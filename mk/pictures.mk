# make pictures: the pictures of README.md and docs/ (docs/img/*.svg and
# their --map text, listed in tests/draw/pictures.sh), drawn by this build
# from the topology corpus so they stay true to the code.
# tests/draw/t-draw.sh fails when a committed picture is not what the code
# draws: after a planner change, run make pictures and commit docs/img/.
.PHONY: pictures
pictures: $(BUILD)/numaguard
	@sh tests/draw/pictures.sh $(BUILD)/numaguard docs/img
