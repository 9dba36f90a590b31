# The two commands of the quick start: `make demo` and `make test`.
# Both install missing Debian packages first (scripts/setup.sh), then build with CMake + Ninja.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all setup configure build demo test clean format install deb
PREFIX ?= /usr/local

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

# After the build, `import paraxis` works in Debian's python3 (and any Python 3.11 of this
# user): a .pth file in the user's site-packages names $(BUILD)/python.
build: configure
	cmake --build $(BUILD) -j $(JOBS)
	@site=$$(/usr/bin/python3 -m site --user-site) && mkdir -p "$$site" && \
	  echo "$(abspath $(BUILD))/python" > "$$site/paraxis-build.pth"

demo: build
	./$(BUILD)/paraxis plan --model resnet50 --cluster abci --gpus 8..1024 --top 16 --explain

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

# `make install PREFIX=...`: paraxis, its docs and the cluster and model files under PREFIX.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A Debian package in $(BUILD) (its Depends from the libraries the executable links).
deb: build
	cd $(BUILD) && cpack -G DEB

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD)

# ThreadSanitizer: the comm runtime, the gradient engine and the equivalence tests in their own
# build folder (TSAN_BUILD), under tests/tsan.supp (uninstrumented MPI and LibTorch internals).
TSAN_BUILD ?= build-tsan
.PHONY: tsan
tsan: setup
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARAXIS_TSAN=ON
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target comm_test train_equivalence_test train_test comm_kill_test
	cd $(TSAN_BUILD) && OMPI_MCA_mca_base_component_disable_dlclose=1 \
	  TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -R "^(comm\.np|comm\.killed|train\.equivalence|GradientGroups|GradientEngine|IrModule)" --timeout 900
