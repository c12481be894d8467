# gpuletd — build, test and run. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/gpulet/gpuletd/internal/version.Version=$(VERSION) -X github.com/gpulet/gpuletd/internal/version.Commit=$(COMMIT)
ORT_LIB := $(CURDIR)/.deps/onnxruntime/libonnxruntime.so.1
export CGO_ENABLED := 1
# go-nvml declares functions NVML deprecates; their warnings say nothing about gpuletd.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
export GPULETD_ONNXRUNTIME_LIBRARY ?= $(ORT_LIB)

PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: test-deps deps-auto help build run test test-short test-gpu bench bench-paper lint fmt generate check-generated deps deps-gpu install uninstall dist dist-gpu image image-gpu clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# An NVIDIA driver on this machine: make run and make install fetch the GPU providers too.
HAVE_NVIDIA := $(shell [ -e /proc/driver/nvidia/version ] && echo 1)

deps: ## fetch ONNX Runtime 1.29.0's core library (pinned, checksum verified) into .deps/
	./scripts/fetch-onnxruntime.sh $(dir $(ORT_LIB))

deps-gpu: ## also fetch ONNX Runtime's CUDA and TensorRT providers (229 MB) into .deps/
	./scripts/fetch-onnxruntime.sh --gpu $(dir $(ORT_LIB))

deps-auto: $(if $(HAVE_NVIDIA),deps-gpu,deps)

build: ## build bin/gpuletd
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/gpuletd ./cmd/gpuletd

run: build deps-auto ## build, make a demo model repository and start the daemon on 127.0.0.1:8700
	@mkdir -p var
	@[ -d var/models ] || ./bin/gpuletd models synth var/models
	GPULETD_STATE_DIR=$(CURDIR)/var GPULETD_RUNTIME_DIR=$(CURDIR)/var/run \
	GPULETD_MODEL_REPOSITORY=$(CURDIR)/var/models ./bin/gpuletd serve

test: deps ## run every test with the race detector (says loudly which test tools are missing)
	@./scripts/test-deps.sh check
	$(GO) test -race -count=1 -timeout 30m ./...
	@./scripts/test-deps.sh check

test-deps: ## install what the tests use beyond Go (chromium, promtool, systemd-analyze, protoc, prlimit, podman, mmdebstrap) with apt-get
	./scripts/test-deps.sh install

test-gpu: deps-gpu ## the tests that need an NVIDIA GPU (they skip cleanly without one)
	$(GO) test -tags gpu -count=1 -timeout 30m -run GPU ./executor/engine ./mps ./cmd/gpuletd

test-short: deps ## quick tests, no race detector
	$(GO) test -short -count=1 ./...

bench: deps ## run the Go benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./...

PAPER_EXPERIMENTS := symphony-table2 deferred-vs-eager flat-top gpulet-vs-temporal fluctuation loki
bench-paper: build ## run the paper experiments: tables into docs/bench/, plots into docs/images/
	@mkdir -p docs/bench docs/images
	@for e in $(PAPER_EXPERIMENTS); do \
		echo "== gpuletd bench $$e"; \
		./bin/gpuletd bench $$e --plot docs/images/$$e.svg | tee docs/bench/$$e.txt || exit 1; \
	done

lint: ## go vet and staticcheck
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

fmt: ## gofmt every Go file
	gofmt -w $$(git ls-files '*.go')

generate: ## regenerate protobuf code (needs protoc)
	$(GO) generate ./...

check-generated: generate ## fail when generated code is stale
	@git diff --exit-code -- '*.pb.go' || { echo "generated code is stale: run make generate and commit" >&2; exit 1; }

install: build deps-auto ## install binary, library, unit, default config and user (as root)
	./systemd/install.sh install "$(DESTDIR)" "$(PREFIX)"

uninstall: ## remove what install put there; keeps /var/lib/gpuletd
	./systemd/install.sh uninstall "$(DESTDIR)" "$(PREFIX)"

dist: build deps ## release archive for servers without Go or npm: dist/gpuletd-VERSION-linux-amd64.tar.gz
	VERSION=$(VERSION) GPULETD_BIN=bin/gpuletd GPULETD_ONNXRUNTIME_LIBRARY=$(ORT_LIB) ./scripts/dist.sh dist

dist-gpu: build deps-gpu ## the same with ONNX Runtime's CUDA and TensorRT providers (…-cuda.tar.gz)
	VERSION=$(VERSION) GPULETD_BIN=bin/gpuletd GPULETD_ONNXRUNTIME_LIBRARY=$(ORT_LIB) ./scripts/dist.sh --gpu dist

PLATFORM = $(shell $(GO) env GOOS)-$(shell $(GO) env GOARCH)
image: dist ## container image gpuletd:VERSION from the release archive (docker, or podman; CONTAINER=podman to choose)
	./scripts/image.sh dist/gpuletd-$(VERSION)-$(PLATFORM).tar.gz

image-gpu: dist-gpu ## the same for NVIDIA GPUs, on NVIDIA's CUDA 13 runtime with cuDNN: gpuletd:VERSION-cuda
	./scripts/image.sh dist/gpuletd-$(VERSION)-$(PLATFORM)-cuda.tar.gz

clean: ## remove build outputs
	rm -rf bin dist
