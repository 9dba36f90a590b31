# The two commands of the quick start: `make demo` and `make test`.
# Both install missing Debian packages first (scripts/setup.sh), then build with CMake + Ninja.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all setup configure build demo test clean format

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: setup $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/paraxis plan --model resnet50 --cluster abci --gpus 8..1024 --top 16 --explain

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
