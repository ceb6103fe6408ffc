# Runnel build and test entry points. Everything here needs only Go (and a
# C compiler for the race detector); the image targets also need Docker.

GO      ?= go
BIN     ?= bin
FUZZTIME ?= 30000x

.PHONY: test vet unit fuzz bench build static images compose-up compose-down dev quickstart

## test: what CI runs — vet, race-enabled tests, then a short run of every fuzz target.
test:
	./scripts/test.sh

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1s ./remoting/ ./store/...

## build: binaries for this machine into ./bin
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## static: static binaries (CGO_ENABLED=0) for the FROM-scratch images
static:
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags '-s -w' -o $(BIN)/static/ ./cmd/...

## images: static binaries, then images built FROM scratch (no registry needed)
images:
	./scripts/compose.sh images

## compose-up: the dev cluster under docker compose, waiting until healthy
compose-up:
	./scripts/compose.sh up

compose-down:
	./scripts/compose.sh down

## quickstart: run the README's quick start against a runnel dev of its own
quickstart:
	./scripts/quickstart.sh

## dev: name server and broker in one process
dev:
	$(GO) run ./cmd/runnel dev
