# SPDX-License-Identifier: GPL-3.0-or-later
# Nu11VLT — two commands on a fresh machine:
#   make demo   builds everything and walks a throwaway vault through the main features
#   make test   runs the whole test suite
# Each installs what the machine lacks, from Debian's packages (scripts/ensure-deps.sh): the
# demo only what building and the demo need, the tests their tools as well.
.PHONY: demo test build release man deb vectors clean bench bench-gallery fuzz mutants install uninstall

build:
	@scripts/ensure-deps.sh build
	swift build

demo: build
	@scripts/demo.sh .build/debug/nu11vlt

# The release build links the Swift runtime in (no RUNPATH into the toolchain): the binaries
# need only Debian's libraries. The man page is generated from the command definitions.
RELEASE_FLAGS = -c release --static-swift-stdlib --disable-local-rpath

# The GUI test (minutes of Xvfb and AT-SPI) starts first, in the background, and runs beside the
# suite; then the package test (the .deb from the release build, installed and removed). Their
# Swift tests (GUITests, PackageTests) wait for their results. `swift test` alone runs them inline.
# The end-to-end tests run the release build's binaries (what a user installs; NU11VLT_TEST_BIN_DIR),
# `swift test` alone the debug ones.
test:
	@scripts/ensure-deps.sh test
	swift build --build-tests
	@rm -f .build/gui-test.rc .build/gui-test.log; date +%s > .build/gui-test.started
	@(Tests/GUI/run.sh .build/debug .build/debug/gui-screenshots > .build/gui-test.log 2>&1; echo $$? > .build/gui-test.rc.tmp; mv .build/gui-test.rc.tmp .build/gui-test.rc) &
	@$(MAKE) --no-print-directory man
	swift build $(RELEASE_FLAGS)
	@rm -f .build/package-test.rc .build/package-test.log; date +%s > .build/package-test.started
	@(Tests/Package/run.sh > .build/package-test.log 2>&1; echo $$? > .build/package-test.rc.tmp; mv .build/package-test.rc.tmp .build/package-test.rc) &
	@rm -f .build/sync-test.rc .build/sync-test.log; date +%s > .build/sync-test.started
	@(Tests/Sync/run.sh .build/release/nu11vlt > .build/sync-test.log 2>&1; echo $$? > .build/sync-test.rc.tmp; mv .build/sync-test.rc.tmp .build/sync-test.rc) &
	@NU11VLT_TEST_BIN_DIR=$(CURDIR)/.build/release scripts/run-tests.sh

# The man page, generated from the debug build's command definitions (the same as the release
# build's): the plugin builds every product first, and in release mode that is a whole
# optimized build of its own, which the static release build then does again.
man:
	swift package --disable-sandbox plugin generate-manual --configuration debug >/dev/null

release:
	@scripts/ensure-deps.sh build
	@$(MAKE) --no-print-directory man
	swift build $(RELEASE_FLAGS)

# Installs what `make release` built: nu11vlt and nu11vlt-app in BINDIR, the image helper in
# LIBEXECDIR, the desktop entry, metainfo and icon, the man page and bash/zsh/fish
# completions. The usual PREFIX (default /usr/local; PREFIX=~/.local for one user) and DESTDIR.
PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
LIBEXECDIR = $(DESTDIR)$(PREFIX)/libexec/nu11vlt
DATADIR = $(DESTDIR)$(PREFIX)/share
ZSH_COMPDIR ?= $(PREFIX)/share/zsh/site-functions
RELEASE_BIN = .build/release
MANPAGE = .build/plugins/GenerateManual/outputs/nu11vlt/nu11vlt.1
install:
	@for f in $(RELEASE_BIN)/nu11vlt $(RELEASE_BIN)/nu11vlt-app $(RELEASE_BIN)/nu11vlt-image-helper $(MANPAGE); do \
	  [ -f "$$f" ] || { echo "error: $$f is not built (hint: make release, then make install)" >&2; exit 1; }; done
	install -d $(BINDIR) $(LIBEXECDIR) $(DATADIR)/man/man1 $(DATADIR)/bash-completion/completions \
	  $(DESTDIR)$(ZSH_COMPDIR) $(DATADIR)/fish/vendor_completions.d \
	  $(DATADIR)/applications $(DATADIR)/metainfo $(DATADIR)/icons/hicolor/scalable/apps
	install -m 0755 -s $(RELEASE_BIN)/nu11vlt $(RELEASE_BIN)/nu11vlt-app $(BINDIR)/
	install -m 0755 -s $(RELEASE_BIN)/nu11vlt-image-helper $(LIBEXECDIR)/
	install -m 0644 data/org.nu11vlt.Nu11VLT.desktop $(DATADIR)/applications/
	install -m 0644 data/org.nu11vlt.Nu11VLT.metainfo.xml $(DATADIR)/metainfo/
	install -m 0644 data/icons/hicolor/scalable/apps/org.nu11vlt.Nu11VLT.svg $(DATADIR)/icons/hicolor/scalable/apps/
	sed 's/^$$/.Pp/' $(MANPAGE) > $(DATADIR)/man/man1/nu11vlt.1   # mdoc: a paragraph, not an empty line
	install -m 0644 data/man/nu11vlt-app.1 $(DATADIR)/man/man1/
	$(RELEASE_BIN)/nu11vlt --generate-completion-script bash | sed '1{/^#!/d}' > $(DATADIR)/bash-completion/completions/nu11vlt
	$(RELEASE_BIN)/nu11vlt --generate-completion-script zsh > $(DESTDIR)$(ZSH_COMPDIR)/_nu11vlt
	$(RELEASE_BIN)/nu11vlt --generate-completion-script fish > $(DATADIR)/fish/vendor_completions.d/nu11vlt.fish

uninstall:
	rm -f $(BINDIR)/nu11vlt $(BINDIR)/nu11vlt-app $(LIBEXECDIR)/nu11vlt-image-helper \
	  $(DATADIR)/applications/org.nu11vlt.Nu11VLT.desktop $(DATADIR)/metainfo/org.nu11vlt.Nu11VLT.metainfo.xml \
	  $(DATADIR)/icons/hicolor/scalable/apps/org.nu11vlt.Nu11VLT.svg $(DATADIR)/man/man1/nu11vlt.1 $(DATADIR)/man/man1/nu11vlt-app.1 \
	  $(DATADIR)/bash-completion/completions/nu11vlt $(DESTDIR)$(ZSH_COMPDIR)/_nu11vlt $(DATADIR)/fish/vendor_completions.d/nu11vlt.fish
	-rmdir $(LIBEXECDIR)

# The Debian package, from the release build: .build/deb/nu11vlt_<VERSION>_<arch>.deb
# (Depends from dpkg-shlibdeps), checked by lintian.
deb: release
	@scripts/ensure-deps.sh package
	scripts/make-deb.sh

# Regenerate the project's own test vectors (deterministic; needs Python's cryptography
# and Debian's argon2).
vectors:
	/usr/bin/python3 tools/gen_vectors.py Tests/Nu11FormatTests/Vectors
	tools/gen_argon2_kat.sh > Tests/Nu11FormatTests/Vectors/argon2id_kat.json
	/usr/bin/python3 tools/gen_keystore_vectors.py Tests/Nu11FormatTests/Vectors Tests/Nu11VaultTests/Vectors

clean:
	rm -rf .build
bench:
	bench/run

# The desktop app's gallery alone (10,000 photos): first screen after unlock, tile decode times.
bench-gallery: release
	bench/gallery.py 10000

# libFuzzer harnesses (n11, keystore, settings, archive, video-location); FUZZ_SECONDS per harness.
FUZZ_SECONDS ?= 600
fuzz:
	@scripts/ensure-deps.sh test
	swift build --product nu11vlt-fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld
	@for h in n11 keystore settings archive video-location; do \
	  mkdir -p Fuzz/found/$$h; \
	  echo "== $$h"; \
	  NU11VLT_FUZZ_HARNESS=$$h .build-fuzz/debug/nu11vlt-fuzz Fuzz/found/$$h Fuzz/corpus/$$h \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=70000 -artifact_prefix=Fuzz/found/$$h- -print_final_stats=1 2>&1 | tail -12; \
	done

# Mutation testing: every security-relevant mutant in Sources/*/mutants.txt must be killed
# by the tests named for it (scratch copy and build in .build-mutants/).
mutants:
	@scripts/ensure-deps.sh test
	python3 scripts/mutants.py "$(ARGS)"
