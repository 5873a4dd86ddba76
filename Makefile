# kbench: `make demo` and `make test` are the two entry points (README).
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: all deps configure build test demo bundle format format-check clean

all: build

# Installs the Debian packages that are missing (no-op when all are there).
deps:
	@scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The whole ctest suite. Tests labelled gpu skip cleanly without a GPU.
test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Builds, starts kbd with its embedded store (and a local worker per GPU),
# submits the example kernel and prints the report.
demo: build
	@scripts/demo.sh $(BUILD_DIR)/bin

# A relocatable folder (bin/, lib/, tests/, share/) for GPU hosts that lack
# gRPC: libraries are found through RPATH $ORIGIN/../lib.
bundle: build
	@scripts/bundle.sh $(BUILD_DIR) bundle

# .clang-format keeps `// @kb` lines whole (CommentPragmas), so kernel files
# are formatted like the rest.
FORMAT_FILES = git ls-files '*.cc' '*.h' '*.cu'

format:
	@$(FORMAT_FILES) | xargs clang-format -i

format-check:
	@$(FORMAT_FILES) | xargs clang-format --dry-run -Werror

clean:
	@rm -rf $(BUILD_DIR) bundle
