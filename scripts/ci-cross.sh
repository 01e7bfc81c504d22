#!/usr/bin/env bash
# Cross-compiles and vets the module for every platform it supports
# (docs/platforms.md): linux, darwin, windows and freebsd on amd64 and
# arm64, with cgo off (no C compiler needed), then with cgo on for each
# target that has a C compiler here. The portable memory path of the host
# backend is vetted on this machine too (build tag gocuda_portablemem).
#
# Usage: scripts/ci-cross.sh [GOOS/GOARCH ...]   (default: all eight)
# A target's C compiler is $CC_<goos>_<goarch> if set, else the usual cross
# compiler's name (aarch64-linux-gnu-gcc, x86_64-w64-mingw32-gcc, ...);
# a target without one is skipped with a message, not failed.
# Exits 1 if anything failed, after trying every target, and lists what
# failed.
set -uo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for os in linux darwin windows freebsd; do
		for arch in amd64 arm64; do targets+=("$os/$arch"); done
	done
fi
hostos=$(go env GOHOSTOS)
hostarch=$(go env GOHOSTARCH)
failed=()
skipped=()

# step NAME CMD...: runs CMD, noting NAME as failed if it fails.
step() {
	local name=$1
	shift
	local start=$SECONDS
	if "$@"; then
		echo "ok   $name ($((SECONDS - start))s)"
	else
		echo "FAIL $name"
		failed+=("$name")
	fi
}

# ccFor prints the C compiler for GOOS $1, GOARCH $2, or nothing.
ccFor() {
	local var="CC_$1_$2"
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
		return
	fi
	if [ "$1/$2" = "$hostos/$hostarch" ]; then
		go env CC
		return
	fi
	local names
	case "$1/$2" in
	linux/amd64) names="x86_64-linux-gnu-gcc" ;;
	linux/arm64) names="aarch64-linux-gnu-gcc" ;;
	windows/amd64) names="x86_64-w64-mingw32-gcc" ;;
	windows/arm64) names="aarch64-w64-mingw32-clang aarch64-w64-mingw32-gcc" ;;
	darwin/amd64) names="o64-clang x86_64-apple-darwin-clang" ;;
	darwin/arm64) names="oa64-clang aarch64-apple-darwin-clang arm64-apple-darwin-clang" ;;
	freebsd/amd64) names="x86_64-unknown-freebsd-clang x86_64-freebsd-gcc" ;;
	freebsd/arm64) names="aarch64-unknown-freebsd-clang aarch64-freebsd-gcc" ;;
	esac
	for n in $names; do
		if command -v "$n" >/dev/null; then
			echo "$n"
			return
		fi
	done
}

echo "== cgo off"
for t in "${targets[@]}"; do
	os=${t%/*} arch=${t#*/}
	step "$t build (cgo off)" env GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 go build ./...
	step "$t vet (cgo off)" env GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 go vet ./...
done

echo "== portable memory path on $hostos/$hostarch"
step "$hostos/$hostarch vet (gocuda_portablemem)" go vet -tags gocuda_portablemem ./...

echo "== cgo on, where a C compiler for the target exists"
for t in "${targets[@]}"; do
	os=${t%/*} arch=${t#*/}
	cc=$(ccFor "$os" "$arch")
	if [ -z "$cc" ]; then
		echo "skip $t (cgo on): no C compiler for $os/$arch here (set CC_${os}_${arch})"
		skipped+=("$t")
		continue
	fi
	step "$t build (cgo on, CC=$cc)" env GOOS="$os" GOARCH="$arch" CGO_ENABLED=1 CC="$cc" go build ./...
	step "$t vet (cgo on, CC=$cc)" env GOOS="$os" GOARCH="$arch" CGO_ENABLED=1 CC="$cc" go vet ./...
done

echo "== summary"
[ ${#skipped[@]} -eq 0 ] || echo "cgo builds skipped (no C compiler): ${skipped[*]}"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'failed: %s\n' "${failed[@]}"
	exit 1
fi
echo "every target builds and vets"
