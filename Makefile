# pi: build, test, lint, benchmark and install targets. See README.md.

CARGO  ?= cargo
PREFIX ?= $(HOME)/.local
MUSL   := x86_64-unknown-linux-musl
STATIC := target/$(MUSL)/release/pi

.PHONY: build test lint bench static install man man-check conformance acp-check local-check fuzz

build:
	$(CARGO) build --release

# Works from a fresh clone: cargo builds everything the tests need (including the pi binary);
# scripts/test-deps.sh installs (once) the real MCP servers the MCP tests run.
test:
	scripts/test-deps.sh
	$(CARGO) test --tests

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

# `scripts/icount.sh OLD_PI NEW_PI` compares two builds by callgrind instruction counts on the same
# workloads (deterministic, unlike wall-clock time on a shared machine).
bench:
	scripts/bench.sh

# Differential check against the TypeScript pi (installed once into ~/.cache/pi-conformance with
# npm/pip; needs the registries the first time). REF picks the references, CASES filters ids
# (globs, comma separated), JOBS the parallelism. Not part of `make test`, which stays offline.
REF   ?= 0.73.1,1.6.0
CASES ?= *
JOBS  ?= 4
conformance:
	$(CARGO) build --release
	python3 scripts/conformance/run.py --ours target/release/pi --ref '$(REF)' --filter '$(CASES)' --jobs $(JOBS)

# One editor session (issue 32) through pi-acp 0.0.34 + the TypeScript pi 1.6.0, through ours
# natively (`pi acp`) and through pi-acp over ours, against the same mock model: prints the columns
# side by side and the differences, and fails on one docs/compat.md's ACP section does not list.
# Installs pi-acp and pi 1.6.0 once into the conformance cache (needs the npm registry the first
# time). ACP_ALL=1 prints every row, not only the differing ones. Not part of `make test`.
ACP_ALL ?=
acp-check:
	$(CARGO) build
	python3 scripts/acp_check.py --pi target/debug/pi --via-pi-acp $(if $(ACP_ALL),--all)

# Our pi against the real llama.cpp engine (n_ctx 4096, a tiny GGUF made on the spot), as a
# user with only a local model runs it; prints a table. Builds llama-server from PyPI's
# llama-cpp-python sources once into ~/.cache/pi-local-check (slow). Not part of `make test`.
local-check:
	scripts/local-check.sh

# Coverage-guided fuzzing of every parser that reads outside input (fuzz/README.md): builds
# fuzz/ with libFuzzer on stable rustc and runs each target for FUZZ_RUNS inputs (10^6).
# Not part of `make test`, which replays fuzz/corpus and fuzz/regressions instead.
FUZZ_RUNS ?= 1000000
FUZZ_JOBS ?= 1
fuzz:
	FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_JOBS=$(FUZZ_JOBS) fuzz/run.sh $(TARGETS)

# The static binary (non-PIE, see .cargo/config.toml). ring, under rustls, compiles a little C:
# with a musl cross compiler when one is installed (`apt-get install musl-tools`), else with the
# host's cc, which is enough for ring's C (it includes only the compiler's stdint.h and the like).
MUSL_CC ?= $(shell command -v x86_64-linux-musl-gcc || command -v musl-gcc || echo cc)
static:
	@rustup target list --installed 2>/dev/null | grep -qx '$(MUSL)' || rustup target add $(MUSL)
	CC_x86_64_unknown_linux_musl='$(MUSL_CC)' $(CARGO) build --release --target $(MUSL)
	@file $(STATIC)
	@if file $(STATIC) | grep -Eq 'statically linked|static-pie linked'; then \
		echo "ok: $(STATIC) is static ($$(stat -c %s $(STATIC)) bytes)"; \
	else \
		echo "error: $(STATIC) is not statically linked:" >&2; ldd $(STATIC) >&2 || true; exit 1; \
	fi

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 target/release/pi $(DESTDIR)$(PREFIX)/bin/pi
	install -m 0644 man/pi.1 $(DESTDIR)$(PREFIX)/share/man/man1/pi.1

# The man page is generated from the flag table (examples/gen_man.rs) and committed.
man:
	@mkdir -p man
	$(CARGO) run --quiet --example gen_man > man/pi.1.tmp
	mv man/pi.1.tmp man/pi.1

man-check:
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	$(CARGO) run --quiet --example gen_man > "$$tmp" && \
	if diff -u man/pi.1 "$$tmp"; then echo "man/pi.1 is up to date"; \
	else echo "man/pi.1 is stale: run 'make man'" >&2; exit 1; fi
