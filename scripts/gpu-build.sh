#!/usr/bin/env bash
# Builds every package's tests (and the gocuda command) into .gpu/, stripped and
# packed, for the GPU machine, which has a driver but no Go toolchain.
#
#   scripts/gpu-build.sh            # all packages with tests
#   scripts/gpu-build.sh ./pool/... # some packages
#   RACE=1 scripts/gpu-build.sh     # with the race detector (larger, slower)
#   GOCUDA_GPU_BUILD_TAGS=gocuda_nolinkname scripts/gpu-build.sh
#                                   # with build tags (here: the cgo fallback
#                                   # for cuda's fast calls, not the linkname path)
#
# Then on the GPU machine, from the repository root (.gpu carried along):
#   bash scripts/gpu-run.sh [--bench REGEX] [--sanitizer memcheck|racecheck] [--run REGEX] [PKG...]
# See docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=1 # the driver is dlopen'd: cgo, but no CUDA headers or libraries
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
rm -rf .gpu/bin && mkdir -p .gpu/bin
flags=(-ldflags='-s -w' -trimpath)
[ "${RACE:-}" = 1 ] && flags+=(-race)
tags=${GOCUDA_GPU_BUILD_TAGS:-}
[ -n "$tags" ] && flags+=(-tags="$tags")
manifest=.gpu/bin/MANIFEST
: >"$manifest"
module=$(go list -m)
# One test binary per package that has tests; the manifest says which folder
# each runs in, because tests read their testdata relative to it.
go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "${pkgs[@]}" | while read -r pkg; do
	[ -n "$pkg" ] || continue
	rel=${pkg#"$module"}; rel=${rel#/}; [ -n "$rel" ] || rel=.
	name=$(echo "$rel" | tr / _)
	go test -c "${flags[@]}" -o ".gpu/bin/$name.test" "$pkg"
	echo "$name.test $rel" >>"$manifest"
done
go build "${flags[@]}" -o .gpu/bin/gocuda ./cmd/gocuda
# gpu-run.sh prints these, so that a log says which build it ran.
echo "${tags:-(none)}" >.gpu/bin/TAGS
# The training example, for its benchmark beside bench/pytorch_train.py.
go build "${flags[@]}" -o .gpu/bin/train ./examples/train
# The data-parallel example, for its one-GPU run beside single-device training.
go build "${flags[@]}" -o .gpu/bin/dataparallel ./examples/dataparallel
count=$(wc -l <"$manifest")
# xz -9: its 64 MiB dictionary spans several test binaries, which share most
# of their code (the runtime, testify, gocuda): 3x smaller than the default.
# One thread: xz's threads compress independent blocks, which share
# nothing (all 52 packages: 130 MB with -T0, 62 MB with -T1; cuda, kernels
# and cuarray alone: 22 MB). The carry limit is 64 MiB with the tree.
tar -C .gpu -cf - bin | xz -9 -T1 >.gpu/bundle.tar.xz
rm -rf .gpu/bin
echo "built $count test binaries, gocuda, train and dataparallel (build tags: ${tags:-none}): .gpu/bundle.tar.xz ($(du -h .gpu/bundle.tar.xz | cut -f1)); carry .gpu to the GPU machine"
