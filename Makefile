# The suite's entry points. `make test` and `make paper` work on a fresh Debian machine:
# both install missing packages first (make deps), then build.
BUILD   ?= build
JOBS    ?= $(shell nproc)
PYTHON  := /usr/bin/python3
RESULTS ?= results
CMAKE_FLAGS ?=
SCALE   ?= quick

.PHONY: all deps configure build test paper publish figures bench clean readme

all: build

deps:
	@bash scripts/deps.sh

# Missing packages are named in one line that says to run `make deps`, before CMake stops on the
# first of them with "could not find xtl" (scripts/deps.sh --check: one dpkg-query call).
$(BUILD)/CMakeCache.txt:
	@bash scripts/deps.sh --check
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	@bash scripts/deps.sh --check
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

# results/README.md: its per-experiment sections from every binary's --describe; docs/science.md: the
# tables of registered normalisers (a test fails when either is stale).
readme: build
	$(PYTHON) scripts/results_readme.py --bin $(BUILD)/bin
	$(PYTHON) scripts/normaliser_tables.py --bin $(BUILD)/bin

# The sweeps of one scale (sweeps/$(SCALE)/*.cfg), building only the binaries they run, then every
# figure and the report (results/report/index.html); prints each stage's time. SCALE=quick (the
# default, minutes), SCALE=paper (the paper's own sizes, about two hours on 2 cores; resumable),
# SCALE=cluster (prints the sharp-submit commands; runs nothing). SWEEPS='GLOB...' runs only the
# sweeps whose names match (e.g. SWEEPS='train-text* eval-text*'; scripts/paper.sh --sweeps).
paper: deps configure
ifeq ($(SCALE),cluster)
	@bash scripts/paper.sh $(if $(SWEEPS),--sweeps '$(SWEEPS)') $(BUILD)/bin $(RESULTS) cluster
else
	bash scripts/paper.sh --build $(BUILD) --jobs $(JOBS) --figures $(if $(SWEEPS),--sweeps '$(SWEEPS)') $(BUILD)/bin $(RESULTS) $(SCALE)
endif

# Ships the result files of a finished `make paper SCALE=...` run: results/published/$(SCALE)/ with
# MANIFEST.json (each file's sha256, git_sha, command, scale, wall time, cores); never model weights.
# At most 25 MB on disk unless LIMIT_MB=... says otherwise (the manifest records the limit used);
# INCLUDE='NAME...' also ships those files whatever their scale (the text study's pilot evaluation).
publish:
	$(PYTHON) scripts/publish.py --scale $(SCALE) $(if $(LIMIT_MB),--limit-mb $(LIMIT_MB)) $(foreach name,$(INCLUDE),--include $(name)) $(RESULTS)

# Figures, tables and the paper page (results/report/index.html) from the HDF5 files already in
# results/ (nothing is recomputed). The page is written even when a figure's input is refused (it
# shows the reason); the exit status is make_figures.py's, or 1 when a section of the page failed.
figures:
	@status=0; $(PYTHON) analysis/make_figures.py $(RESULTS) || status=$$?; \
	  $(PYTHON) analysis/make_report.py $(RESULTS) && exit $$status

# Benchmarks also need the reference a user would otherwise pick (PyTorch on CPU): deps.sh --bench.
bench:
	@bash scripts/deps.sh --bench
	@$(MAKE) --no-print-directory build
	bash scripts/bench.sh $(BUILD)/bin

clean:
	rm -rf $(BUILD)
