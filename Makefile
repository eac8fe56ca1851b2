# The suite's entry points. `make test` and `make paper` work on a fresh Debian machine:
# both install missing packages first (make deps), then build.
BUILD   ?= build
JOBS    ?= $(shell nproc)
PYTHON  := /usr/bin/python3
RESULTS ?= results
CMAKE_FLAGS ?=

.PHONY: all deps configure build test paper figures bench clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

# Quick-scale sweeps of every experiment (sweeps/quick/*.cfg), then every figure.
paper: deps
	@$(MAKE) --no-print-directory build
	bash scripts/paper.sh $(BUILD)/bin $(RESULTS)
	@$(MAKE) --no-print-directory figures

# Figures and tables from the HDF5 files already in results/ (nothing is recomputed).
figures:
	$(PYTHON) analysis/make_figures.py $(RESULTS)

bench: deps
	@$(MAKE) --no-print-directory build
	bash scripts/bench.sh $(BUILD)/bin

clean:
	rm -rf $(BUILD)
