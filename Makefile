# Nu11VLT — two commands on a fresh machine:
#   make demo   builds everything and walks a throwaway vault through the main features
#   make test   runs the whole test suite
.PHONY: demo test build release vectors clean

build:
	@scripts/ensure-deps.sh
	swift build

demo: build
	@scripts/demo.sh .build/debug/nu11vlt

test:
	@scripts/ensure-deps.sh
	swift build --build-tests
	swift test --skip-build

release:
	@scripts/ensure-deps.sh
	swift build -c release

# Regenerate the project's own test vectors (deterministic; needs Python's cryptography
# and Debian's argon2).
vectors:
	python3 tools/gen_vectors.py Tests/Nu11FormatTests/Vectors
	tools/gen_argon2_kat.sh > Tests/Nu11FormatTests/Vectors/argon2id_kat.json

clean:
	rm -rf .build
