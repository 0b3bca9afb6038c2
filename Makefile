# Nu11VLT — two commands on a fresh machine:
#   make demo   builds everything and walks a throwaway vault through the main features
#   make test   runs the whole test suite
.PHONY: demo test build release vectors clean bench bench-gallery fuzz mutants install

build:
	@scripts/ensure-deps.sh
	swift build

demo: build
	@scripts/demo.sh .build/debug/nu11vlt

# The GUI test (minutes of Xvfb and AT-SPI) starts first, in the background, and runs beside the
# suite; its Swift test (GUITests) waits for its result. `swift test` alone runs it inline.
test:
	@scripts/ensure-deps.sh
	swift build --build-tests
	swift package --disable-sandbox plugin generate-manual >/dev/null   # the man page test renders it
	@rm -f .build/gui-test.rc .build/gui-test.log; date +%s > .build/gui-test.started
	@(Tests/GUI/run.sh .build/debug .build/debug/gui-screenshots > .build/gui-test.log 2>&1; echo $$? > .build/gui-test.rc.tmp; mv .build/gui-test.rc.tmp .build/gui-test.rc) &
	@scripts/run-tests.sh

release:
	@scripts/ensure-deps.sh
	swift build -c release

# Installs nu11vlt, nu11vlt-app (with its desktop entry, metainfo and icon), the image helper (next to them), the man page (generated from the
# command definitions) and bash/zsh/fish completions under PREFIX (default ~/.local).
PREFIX ?= $(HOME)/.local
install: release
	swift package --disable-sandbox plugin generate-manual >/dev/null
	install -d $(PREFIX)/bin $(PREFIX)/share/man/man1 $(PREFIX)/share/bash-completion/completions \
	  $(PREFIX)/share/zsh/site-functions $(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 .build/release/nu11vlt .build/release/nu11vlt-image-helper .build/release/nu11vlt-app $(PREFIX)/bin/
	install -d $(PREFIX)/share/applications $(PREFIX)/share/metainfo $(PREFIX)/share/icons/hicolor/scalable/apps
	install -m 0644 data/org.nu11vlt.Nu11VLT.desktop $(PREFIX)/share/applications/
	install -m 0644 data/org.nu11vlt.Nu11VLT.metainfo.xml $(PREFIX)/share/metainfo/
	install -m 0644 data/icons/hicolor/scalable/apps/org.nu11vlt.Nu11VLT.svg $(PREFIX)/share/icons/hicolor/scalable/apps/
	install -m 0644 .build/plugins/GenerateManual/outputs/nu11vlt/nu11vlt.1 $(PREFIX)/share/man/man1/
	.build/release/nu11vlt --generate-completion-script bash > $(PREFIX)/share/bash-completion/completions/nu11vlt
	.build/release/nu11vlt --generate-completion-script zsh > $(PREFIX)/share/zsh/site-functions/_nu11vlt
	.build/release/nu11vlt --generate-completion-script fish > $(PREFIX)/share/fish/vendor_completions.d/nu11vlt.fish

# Regenerate the project's own test vectors (deterministic; needs Python's cryptography
# and Debian's argon2).
vectors:
	python3 tools/gen_vectors.py Tests/Nu11FormatTests/Vectors
	tools/gen_argon2_kat.sh > Tests/Nu11FormatTests/Vectors/argon2id_kat.json
	python3 tools/gen_keystore_vectors.py Tests/Nu11FormatTests/Vectors Tests/Nu11VaultTests/Vectors

clean:
	rm -rf .build
bench:
	bench/run

# The desktop app's gallery alone (10,000 photos): first screen after unlock, tile decode times.
bench-gallery: release
	bench/gallery.py 10000

# libFuzzer harnesses (n11, keystore, settings, archive); FUZZ_SECONDS per harness.
FUZZ_SECONDS ?= 600
fuzz:
	@scripts/ensure-deps.sh
	swift build --product nu11vlt-fuzz --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld
	@for h in n11 keystore settings archive; do \
	  mkdir -p Fuzz/found/$$h; \
	  echo "== $$h"; \
	  NU11VLT_FUZZ_HARNESS=$$h .build-fuzz/debug/nu11vlt-fuzz Fuzz/found/$$h Fuzz/corpus/$$h \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=70000 -artifact_prefix=Fuzz/found/$$h- -print_final_stats=1 2>&1 | tail -12; \
	done

# Mutation testing: every security-relevant mutant in Sources/*/mutants.txt must be killed
# by the tests named for it (scratch copy and build in .build-mutants/).
mutants:
	@scripts/ensure-deps.sh
	python3 scripts/mutants.py "$(ARGS)"
