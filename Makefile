# ult: the two commands of the README, and a few conveniences.
#   make          build the library (release)
#   make check    build the dev preset and run every test (CTest)
#   make bench    run the benchmark suite and write build/bench/report.md
#   make install  install libult.a, libult.so, ult.h and ult.pc (PREFIX=/usr/local)

PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_JOBS ?= 2

.PHONY: all release check dev bench install format format-check clean

all: release

release:
	cmake --preset release >/dev/null
	cmake --build build/release -j $(JOBS)

dev:
	cmake --preset dev >/dev/null
	cmake --build build/dev -j $(JOBS)

check: dev
	ctest --test-dir build/dev --output-on-failure -j $(CTEST_JOBS)

bench: release
	sh bench/deps.sh
	sh bench/run.sh build/release build/bench

install: release
	cmake --install build/release --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build
