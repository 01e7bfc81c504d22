#!/usr/bin/env bash
# Compiles the array kernels, kernels/cuda/kernels.cu, to PTX in
# kernels/ptx/kernels.ptx.gz and to machine code for sm_80 and sm_90 in
# kernels/ptx/kernels.fatbin.NN.gz (in pieces), all committed and embedded in
# package kernels (go:embed), so that neither users nor CI need nvcc. They are
# gzip'd (-9n: no name or time, so the same input gives the same bytes):
# unpacked they are tens of MiB that every program linking cuarray carries. Run it on a machine with
# the CUDA toolkit whenever kernels.cu changes, then commit the files.
#
#   scripts/gen-ptx.sh                  # nvcc from PATH
#   NVCC=/usr/local/cuda/bin/nvcc scripts/gen-ptx.sh
#   LINEINFO=1 scripts/gen-ptx.sh       # with source lines, for compute-sanitizer
#
# kernels/cuda/emu/run.sh runs the same kernels on the CPU (g++, no nvcc) and
# checks their logic; run it after editing kernels.cu.
#
# PTX for compute_80 is compiled by the driver for the GPU at module load:
# it runs on sm_80 and every later GPU (A100, H100's sm_90, ...). The driver
# must be at least as new as the toolkit that wrote the PTX (the PTX .version
# line); an older driver refuses it with CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
#
# No --use_fast_math: the kernels are limited by memory bandwidth, not
# arithmetic, so fast math would buy nothing measurable and would cost
# accuracy (approximate division and exp, flushed subnormals) and semantics
# (it lets the compiler assume no NaN, which breaks Max and Min's NaN
# propagation and Relu's NaN -> 0). As compiled,
# float division and sqrt round correctly (IEEE 754), expf and tanhf are within
# 2 ulp, logf within 1 ulp, the double versions within 1 ulp (the CUDA math
# library's documented bounds). --fmad=true (nvcc's default) lets a*b+c become
# one fused multiply-add, as in Axpy.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=${NVCC:-nvcc}
if ! command -v "$nvcc" >/dev/null 2>&1; then
	echo "gen-ptx: $nvcc not found: this needs the CUDA toolkit (set NVCC to its nvcc)" >&2
	exit 2
fi
src=kernels/cuda/kernels.cu
out=kernels/ptx/kernels.ptx.gz
# -std=c++17 is also what CUB (CCCL 3.x, the toolkit's own headers, which
# kernels.cu includes for cubsort.cuh's wrappers of its onesweep agents)
# needs at least; no other flag: exp/cubsort compiled the same wrappers with
# -O3 -std=c++17 alone.
flags=(-ptx -O3 -arch=compute_80 -std=c++17 --fmad=true)
tmp=$(mktemp --suffix=.ptx)
ftmp=$(mktemp --suffix=.fatbin)
flog=$(mktemp)
trap 'rm -f "$tmp" "$ftmp" "$flog"' EXIT

# Machine code as well, for the GPUs this is mostly run on, so that loading
# the module compiles nothing there (the PTX takes seconds to compile when
# the driver's cache lacks it): sm_80 (A100; its code also runs on the other
# compute capability 8.x GPUs) and sm_90 (H100, H200). package kernels loads
# this fatbin first and falls back to the PTX on any other GPU. Same source
# and flags as the PTX. It compiles in the background while the PTX is
# made and checked, its two targets on threads of their own (--threads 0):
# one after the other, the three compilations of 1000-odd kernels took
# more than ten minutes.
# It is committed in pieces of 8 MiB (of the unpacked fatbin), each its own
# gzip file, kernels/ptx/kernels.fatbin.NN.gz: package kernels unpacks them
# on goroutines of their own at a process's first kernel (one gzip stream
# of the 50 MB took 0.38 s on the H100's host, 0.4-0.9 s on a 2-core one).
# Concatenated, they are one valid gzip stream: cat kernels/ptx/kernels.fatbin.*.gz | gunzip.
fatbin=kernels/ptx/kernels.fatbin.NN.gz
# --no-compress: CUDA 13's nvcc compresses large fatbins by default, which
# hides the kernel names the Go test reads (and the gzip here compresses
# better anyway: 4.2 MB for 478 kernels, against 20.6 MB unpacked).
fflags=(-fatbin -O3 -std=c++17 --fmad=true -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 --no-compress --threads 0)
[ "${LINEINFO:-}" = 1 ] && flags+=(-lineinfo) && fflags+=(-lineinfo)
echo "+ $nvcc ${fflags[*]} -o $fatbin $src &"
"$nvcc" "${fflags[@]}" -o "$ftmp" "$src" >"$flog" 2>&1 &
fpid=$!
echo "+ $nvcc ${flags[*]} -o $out $src"
"$nvcc" "${flags[@]}" -o "$tmp" "$src"
# Our kernels only: CUB's headers instantiate a kernel of their own
# (cub::EmptyKernel<void>, which their host code queries), which the
# fatbin's name check below would not count.
entries=$(grep -cE '^\s*\.visible\s+\.entry\s+gocuda_' "$tmp" || true)
if [ "$entries" -eq 0 ]; then
	echo "gen-ptx: nvcc wrote no kernels to the PTX" >&2
	exit 1
fi
# Assemble it once for the H100 (sm_90), as the driver will, to catch PTX
# the driver would reject and to show register use and spills.
ptxas=$(dirname "$(command -v "$nvcc")")/ptxas
if [ -x "$ptxas" ]; then
	log=$(mktemp)
	"$ptxas" -arch=sm_90 -O3 -v -o /dev/null "$tmp" >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; exit 1; }
	spills=$(grep -E 'bytes spill (stores|loads)' "$log" | grep -vcE '\b0 bytes spill stores, 0 bytes spill loads' || true)
	maxregs=$(grep -oE 'Used [0-9]+ registers' "$log" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
	echo "ptxas sm_90: $entries kernels, at most $maxregs registers a thread, $spills with spills"
	# Which ones: ptxas names a function on the line before its spill line.
	awk '/Function properties for/ { f = $NF } /bytes spill stores/ && !/ 0 bytes spill stores/ { print f ": " $5 " B" }' "$log" |
		paste -sd' ' | fold -s -w 200 | head -5
	rm -f "$log"
fi
gzip -9n -c "$tmp" >"$out"
rm -f "$tmp"
trap 'rm -f "$ftmp" "$flog"' EXIT
echo "wrote $out ($entries kernels) with $("$nvcc" --version | grep -i release | sed 's/.*release/release/')"

wait "$fpid" || { cat "$flog" >&2; exit 1; }
# Its kernel names must be readable (uncompressed), as the Go test that
# checks the fatbin against the Go side's kernel list reads them.
named=$(grep -a -o 'gocuda_[a-z0-9_]*' "$ftmp" | sort -u | wc -l)
if [ "$named" -lt "$entries" ]; then
	echo "gen-ptx: the fatbin names $named kernels, the PTX $entries (compressed?)" >&2
	exit 1
fi
rm -f kernels/ptx/kernels.fatbin.gz kernels/ptx/kernels.fatbin.[0-9][0-9].gz
split -b 8M -d -a 2 "$ftmp" "$ftmp.part."
for part in "$ftmp".part.*; do
	gzip -9n -c "$part" >"kernels/ptx/kernels.fatbin.${part##*.}.gz"
done
rm -f "$ftmp".part.*
echo "wrote $fatbin ($(du -h "$ftmp" | cut -f1) in $(ls kernels/ptx/kernels.fatbin.[0-9][0-9].gz | wc -l) pieces, $(cat kernels/ptx/kernels.fatbin.[0-9][0-9].gz | wc -c) bytes compressed, sm_80 and sm_90)"
trap - EXIT
rm -f "$ftmp" "$flog"
