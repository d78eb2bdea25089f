# Packaging: manual pages, Debian and RPM packages. Included by the top
# Makefile (-include mk/*.mk).
#
#   make install-man   man/numaguard.1, numaguard.8, numaguard-healthcheck.8 into
#                      $(DESTDIR)$(MANDIR)/man1, man8 (MANDIR default
#                      $(PREFIX)/share/man); `make install` should depend on it
#   make uninstall-man the same pages removed
#   make install-pc    numaguard.pc (packaging/numaguard.pc.in) into
#                      $(DESTDIR)$(PKGCONFIGDIR) (default $(LIBDIR)/pkgconfig)
#   make man-lint      groff -man -ww -z on both pages (no output = clean)
#   make deb           binary .debs (dpkg-buildpackage, debhelper) built in a
#                      copy of the tree under $(BUILD)/deb/src; the .debs land
#                      in $(BUILD)/deb/
#   make rpm           binary RPM from packaging/numaguard.spec (rpmbuild)
#                      into $(BUILD)/rpm/RPMS/; RPMBUILD_FLAGS=--nodeps where
#                      the build dependencies are Debian packages, not RPMs
#
# Debian packages needed: debhelper, dpkg-dev (deb), groff-base (man-lint),
# rpm (rpm).

MANDIR     ?= $(PREFIX)/share/man
NG_VERSION := $(shell head -1 debian/changelog 2>/dev/null | awk '{print $$2}' | tr -d '()')
PKG_SRC     = $(BUILD)/deb/src/numaguard-$(NG_VERSION)
# What a source package holds: the tree minus build output and git.
PKG_EXCLUDES = --exclude=./.git --exclude='./build*' --exclude=./debian/tmp \
               --exclude=./debian/numaguard --exclude=./debian/libnumaguard-dev

.PHONY: install-man uninstall-man install-pc uninstall-pc man-lint deb rpm

install-man:
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 644 man/numaguard.1 $(DESTDIR)$(MANDIR)/man1/numaguard.1
	install -m 644 man/numaguard.8 $(DESTDIR)$(MANDIR)/man8/numaguard.8
	install -m 644 man/numaguard-healthcheck.8 $(DESTDIR)$(MANDIR)/man8/numaguard-healthcheck.8

uninstall-man:
	rm -f $(DESTDIR)$(MANDIR)/man1/numaguard.1 $(DESTDIR)$(MANDIR)/man8/numaguard.8 \
	    $(DESTDIR)$(MANDIR)/man8/numaguard-healthcheck.8

# Filled in at install time: PREFIX/LIBDIR may differ from build to install.
install-pc:
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(NG_VERSION)|' \
	    packaging/numaguard.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/numaguard.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/numaguard.pc

uninstall-pc:
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/numaguard.pc

man-lint:
	@for m in man/numaguard.1 man/numaguard.8 man/numaguard-healthcheck.8; do \
	    out=$$(LC_ALL=C.UTF-8 groff -man -ww -z $$m 2>&1); \
	    if [ -n "$$out" ]; then echo "$$m:"; echo "$$out"; exit 1; fi; \
	done; echo "man pages: no groff warnings"

deb:
	rm -rf $(BUILD)/deb && mkdir -p $(PKG_SRC)
	tar -cf - $(PKG_EXCLUDES) . | tar -xf - -C $(PKG_SRC)
	cd $(PKG_SRC) && dpkg-buildpackage -us -uc -b
	mv $(BUILD)/deb/src/*.deb $(BUILD)/deb/
	@ls $(BUILD)/deb/*.deb

rpm:
	rm -rf $(BUILD)/rpm && mkdir -p $(BUILD)/rpm/SOURCES
	tar -czf $(BUILD)/rpm/SOURCES/numaguard-$(NG_VERSION).tar.gz $(PKG_EXCLUDES) \
	    --transform 's,^\.,numaguard-$(NG_VERSION),' .
	rpmbuild -bb $(RPMBUILD_FLAGS) --define "_topdir $(abspath $(BUILD))/rpm" \
	    --define "ng_version $(NG_VERSION)" packaging/numaguard.spec
