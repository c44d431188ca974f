# slurm-lite: see README.md. Every target works on a fresh machine with Go.
GO      ?= go
PREFIX  ?= /usr/local
BINDIR  := bin
FUZZTIME ?= 4s
CMDS    := $(notdir $(wildcard cmd/*))

.PHONY: all build building test test-stress test-live vet unit fuzz bench bench-go bench-vs-slurm test-slurm test-clients test-faults demo install install-docs install-config deb test-deb clean gpu-check

all: build

# go-nvml's nvml.h (NVIDIA's header) marks some NVML calls deprecated, and
# go-nvml's generated bindings call each of them: gcc prints about 140
# lines of warnings the first time the package compiles, which look like
# errors. slurm-lite calls none of those functions, and in this build only
# that header declares anything deprecated, so this silences nothing else.
# (A #cgo CFLAGS line in our own package cannot do it: cgo flags apply to
# the package that states them, and the warnings come from go-nvml's.)
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

## build: every command into ./bin. The Slurm commands and the job
## supervisor are static binaries without cgo (they link none:
## internal/importrules checks it); only slurmd-lite links cgo, for NVML.
build: building
	@mkdir -p $(BINDIR)
	$(GO) build -o $(BINDIR)/ ./cmd/slurmd-lite
	CGO_ENABLED=0 $(GO) build -o $(BINDIR)/ $(addprefix ./cmd/,$(filter-out slurmd-lite,$(CMDS)))

# building: a first build compiles every dependency (SQLite's Go
# translation is the bulk: about two minutes), so say so on a terminal;
# piped, nothing (internal/e2e's TestMakeBuildingOnTerminal).
building:
	@[ ! -t 1 ] || echo "building..."

## test: vet, then the unit and end-to-end tests with each fuzz target
## briefly beside them: the end-to-end scripts spend most of their
## minutes waiting on jobs and timers, which the fuzzers' CPU fills
test: vet
	@$(MAKE) --no-print-directory -j2 unit fuzz

vet:
	$(GO) vet ./...
	@# go.mod and go.sum say exactly what the code imports.
	$(GO) mod tidy -diff
	@# Every file as gofmt writes it.
	@test -z "$$(gofmt -l cmd internal scripts)" || { echo "not gofmt-clean:"; gofmt -l cmd internal scripts; exit 1; }

# unit: on a terminal, a line as each package starts and ends; piped, go
# test's own output (scripts/unit).
unit:
	@GO=$(GO) scripts/unit

## test-stress: the unit stage three times with every core kept busy
## (scripts/cpuhog): what passes only on an idle machine fails here
test-stress:
	@scripts/test-stress

## test-live: the daemon against the simulator, second for second on the
## wall clock (internal/livereplay), alone on the machine: beside the other
## packages of make test a start can fall a second late. A replay the
## machine could not keep up with is replayed, and skipped, saying so, if
## it never could. One replay at a time: side by side (-parallel 4) the
## untuned P4 replay diverged in 3 of 7 runs without its lag being seen,
## and in none of 3 alone.
test-live:
	SLITE_LIVE=1 $(GO) test -count=1 -parallel 1 -v -run '^TestLiveReplay' ./internal/livereplay

# Each fuzz target runs on its own for FUZZTIME: go test -fuzz takes one
# target per package at a time.
fuzz:
	@scripts/fuzz-brief $(FUZZTIME)

## bench: the whole-system figures as a table (scripts/bench), measured on
## real processes; bench-go: every Go benchmark (ns/op, B/op, allocs/op)
bench: build
	@scripts/bench

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

## bench-vs-slurm: the command-level figures beside real Slurm 22.05's
## (Debian's packages on loopback, set up and torn down by the script)
bench-vs-slurm: build
	@scripts/bench --vs-slurm

## test-slurm: the exported configuration and every example under real
## Slurm 22.05 (installs Debian's packages; loopback only)
test-slurm: build
	@scripts/test-slurm

## test-clients: submitit, dask-jobqueue and Snakemake's --slurm each run
## their own workflow against a fresh daemon on simulated GPUs, and
## testdata/clients/rest_client.py drives the REST API (slurmrestd v0.0.38)
## (scripts/test-clients; Debian's python3-cloudpickle, python3-distributed
## and snakemake; the clients' sources in testdata/clients/src or CLIENTS_DIR)
test-clients: build
	@scripts/test-clients

## test-faults: a full state disk, a stopped, a killed and a restarted
## daemon, a killed supervisor, oversized request bodies and a deleted
## database, each under load, with nothing lost, doubled or made up after
## each (scripts/test-faults; root, a tmpfs; docs/reliability.md)
test-faults: build
	@scripts/test-faults

## demo: build, start with defaults in a temporary directory, run the examples
demo: build
	@scripts/demo

## gpu-check: on a machine with an NVIDIA GPU, the real driver end to end
## (scripts/gpu-check: the inventory, a real job placed and released, then
## the daemon as make build builds it, with sbatch and a yield). Never part
## of make test, whose TestNVMLStub runs the same against a stub library.
gpu-check:
	@GO=$(GO) scripts/gpu-check

## install: the commands into $(PREFIX)/bin, and install-docs
install: build install-docs
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(addprefix $(BINDIR)/,$(CMDS)) $(DESTDIR)$(PREFIX)/bin/

## install-docs: the man pages of slurm-lite's own additions (slurmd-lite(8),
## slurm-lite.toml(5), slurm-lite-yield(1) for scontrol yield,
## slurm-lite-gpus(1) for sinfo -G) into $(PREFIX)/share/man, and bash
## completion of every command's options, one file with a link per command
## as bash-completion looks them up by name (Debian's Slurm packages do the
## same). Slurm's own man pages come with Slurm (apt install slurm-client).
COMPLETIONS := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
install-docs:
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man8 $(COMPLETIONS)
	install -m 0644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 0644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 completion/slurm-lite.bash $(COMPLETIONS)/slurm-lite
	for c in $(filter-out slurmstepd-lite,$(CMDS)); do ln -sf slurm-lite $(COMPLETIONS)/$$c; done
	@[ -n "$(DESTDIR)" ] || [ -e /usr/share/bash-completion/bash_completion ] || \
		echo "note: bash completion was installed, but the bash-completion package that loads it is not: sudo apt install bash-completion"

## install-config: the machine's configuration, /etc/slurm-lite/slurm-lite.toml,
## every key commented out with its meaning (packaging/slurm-lite.toml, made
## from the example by internal/docgen); a file already there is kept.
install-config:
	@if [ -e $(DESTDIR)/etc/slurm-lite/slurm-lite.toml ]; then \
		echo "kept $(DESTDIR)/etc/slurm-lite/slurm-lite.toml (the shipped one is packaging/slurm-lite.toml)"; \
	else \
		install -D -m 0644 packaging/slurm-lite.toml $(DESTDIR)/etc/slurm-lite/slurm-lite.toml && \
		echo "installed $(DESTDIR)/etc/slurm-lite/slurm-lite.toml: every key commented out; slurmd-lite config checks it"; \
	fi

## deb: slurm-lite_VERSION_ARCH.deb in ./ (scripts/make-deb: dpkg-deb, laid
## out as Debian lays out Slurm; conflicts with slurm-client)
deb:
	@scripts/make-deb .

## test-deb: build the package, lintian it, install it, run the daemon as its
## unit does, submit as alice, remove and purge it, checking each step
## (root, on a machine without Slurm's commands; CI runs it)
test-deb:
	@scripts/test-deb

clean:
	rm -rf $(BINDIR)
