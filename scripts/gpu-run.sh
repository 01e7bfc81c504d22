#!/usr/bin/env bash
# Runs the test binaries built by scripts/gpu-build.sh on a GPU machine, with
# GOCUDA_BACKEND=cuda so that every test uses the GPU (a test that cannot reach
# it fails instead of falling back). Prints one line per package and exits
# non-zero if any package fails. Logs go to $OUT (or .gpu/logs).
#
#   bash scripts/gpu-run.sh                          # every package's tests
#   bash scripts/gpu-run.sh pool_binned cuda         # some (names from MANIFEST)
#   bash scripts/gpu-run.sh --run 'TestX|TestY'      # a -test.run filter
#   bash scripts/gpu-run.sh --bench . --benchtime 1s # benchmarks only
#   bash scripts/gpu-run.sh --sanitizer memcheck     # under compute-sanitizer
#   bash scripts/gpu-run.sh --short                  # -test.short
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
run="" bench="" benchtime="" sanitizer="" short="" timeout=600s
only=()
while [ $# -gt 0 ]; do
	case "$1" in
	--run) run=$2; shift 2 ;;
	--bench) bench=$2; shift 2 ;;
	--benchtime) benchtime=$2; shift 2 ;;
	--sanitizer) sanitizer=$2; shift 2 ;;
	--short) short=1; shift ;;
	--timeout) timeout=$2; shift 2 ;;
	-h|--help) sed -n '2,13p' "$0"; exit 0 ;;
	*) only+=("${1%.test}"); shift ;;
	esac
done
[ -f .gpu/bundle.tar.xz ] || { echo "no .gpu/bundle.tar.xz: run scripts/gpu-build.sh first and carry .gpu" >&2; exit 2; }
# Unpacked once a bundle: runs after the first (bench/two_gpus.sh makes
# several) start at once.
if [ ! -f .gpu/bin/MANIFEST ] || [ .gpu/bundle.tar.xz -nt .gpu/bin/MANIFEST ]; then
	rm -rf .gpu/bin && tar -C .gpu -xJf .gpu/bundle.tar.xz && touch .gpu/bin/MANIFEST
fi
logs=${OUT:-$root/.gpu/logs}
mkdir -p "$logs"
export GOCUDA_BACKEND=${GOCUDA_BACKEND:-cuda}
[ -f .gpu/bin/TAGS ] && echo "build tags: $(cat .gpu/bin/TAGS)"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
args=(-test.count=1 -test.timeout="$timeout")
[ -n "$run" ] && args+=(-test.run="$run")
[ -n "$short" ] && args+=(-test.short)
if [ -n "$bench" ]; then
	args+=(-test.run='^$' -test.bench="$bench" -test.benchmem)
	[ -n "$benchtime" ] && args+=(-test.benchtime="$benchtime")
fi
fail=0 ran=0
while read -r bin dir; do
	name=${bin%.test}
	if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then continue; fi
	ran=$((ran + 1))
	log="$logs/$name.log"
	cmd=("$root/.gpu/bin/$bin" "${args[@]}" -test.v)
	# Tests provoke driver errors on purpose (a missing kernel, too large an
	# allocation); the sanitizer is here for memory and race errors.
	[ -n "$sanitizer" ] && cmd=(compute-sanitizer --tool "$sanitizer" --report-api-errors no --error-exitcode 99 "${cmd[@]}")
	start=$(date +%s%N)
	(cd "$root/$dir" && "${cmd[@]}") >"$log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	passed=$(grep -c '^--- PASS' "$log") skipped=$(grep -c '^--- SKIP' "$log") failed=$(grep -c '^--- FAIL' "$log")
	if [ $rc -eq 0 ]; then
		printf 'ok    %-28s %6.1fs  %d passed, %d skipped\n' "$dir" "$secs" "$passed" "$skipped"
	else
		fail=$((fail + 1))
		printf 'FAIL  %-28s %6.1fs  %d passed, %d failed (exit %d), log %s\n' "$dir" "$secs" "$passed" "$failed" "$rc" "$log"
		grep -E '^\s*--- FAIL|Error Trace|Error:|panic:|========= ' "$log" | head -20 | sed 's/^/      /'
	fi
	if [ -n "$bench" ]; then grep -E '^Benchmark.*/op' "$log"; fi
done <.gpu/bin/MANIFEST
echo "$((ran - fail)) packages passed, $fail failed"
[ $ran -gt 0 ] || { echo "no package matched" >&2; exit 2; }
[ $fail -eq 0 ]
