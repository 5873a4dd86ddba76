# kbench: `make demo` and `make test` are the two entry points (README).
# PRESET=dev|asan|tsan|ci builds with that CMake preset (CMakePresets.json)
# in build/PRESET instead, e.g. `make check PRESET=dev`.
PRESET ?=
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CTEST_ARGS ?=
# Labels `make check` builds and runs: unit, or unit+integration (what CI
# runs under ASan and UBSan).
CHECK ?= unit
ifeq ($(PRESET),)
BUILD_DIR ?= build
CONFIGURE = cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
else
BUILD_DIR := build/$(PRESET)
CONFIGURE = cmake --preset $(PRESET)
endif
# TSan sees absl::Mutex only if abseil itself is instrumented: the tsan
# preset links a TSan build of Debian's abseil (scripts/tsan-deps.sh).
# testing/tsan.supp names the reports that are not kbench races, with why.
ifeq ($(PRESET),tsan)
CONFIGURE := scripts/tsan-deps.sh && $(CONFIGURE)
export TSAN_OPTIONS := suppressions=$(CURDIR)/testing/tsan.supp $(TSAN_OPTIONS)
endif

.PHONY: all deps configure build test check demo demo-build bundle format format-check tidy clean

all: build

# Installs the Debian packages that are missing (no-op when all are there).
deps:
	@scripts/deps.sh

configure: deps
	@$(CONFIGURE) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The whole ctest suite. Tests labelled gpu skip cleanly without a GPU.
test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The inner loop: builds the unit tests and what they run, then runs the
# unit label (every library's own tests and the layer check).
# CHECK=unit+integration adds the process-level integration label.
ifeq ($(CHECK),unit)
CHECK_TARGETS = unit-tests
CHECK_REGEX = ^unit$$
else ifeq ($(CHECK),unit+integration)
CHECK_TARGETS = unit-tests integration-tests
CHECK_REGEX = ^(unit|integration)$$
else
$(error CHECK must be unit or unit+integration, not '$(CHECK)')
endif
check: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target $(CHECK_TARGETS)
	@ctest --test-dir $(BUILD_DIR) -L '$(CHECK_REGEX)' -j $(JOBS) --output-on-failure $(CTEST_ARGS)

# Builds only what the demo runs (kbd, kbcompile, kbworker, kbrunner,
# kbctl), starts kbd with its embedded store (and a local worker per GPU),
# submits the example kernel and prints the report.
demo-build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target demo-binaries

demo: demo-build
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

# clang-tidy (.clang-tidy) on the C++ files changed against TIDY_BASE
# (default HEAD~1), with the build's compile commands.
tidy: configure
	@scripts/tidy.sh $(BUILD_DIR)

clean:
	@rm -rf $(BUILD_DIR) bundle
