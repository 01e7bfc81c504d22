#!/usr/bin/env bash
# Issue 15's table on a GPU machine: examples/train with the pacer (the
# default, GOCUDA_GC_PERCENT=100) and without it (-gc-percent off) beside
# bench/pytorch_train.py on the same model, in one session. Needs .gpu/bin/train
# from scripts/gpu-build.sh (carry .gpu). Reports and tables go to $OUT/pacer
# (or ./pacer-out).
#
#   bash bench/pacer_runs.sh            # every configuration
#   bash bench/pacer_runs.sh default    # some: default heap w1024 quick limit
set -uo pipefail
cd "$(dirname "$0")/.."
export GOCUDA_BACKEND=cuda NCCL_NVLS_ENABLE=0
train=.gpu/bin/train
[ -x "$train" ] || { rm -rf .gpu/bin && tar -C .gpu -xJf .gpu/bundle.tar.xz; }
o=${OUT:-$PWD/pacer-out}/pacer
mkdir -p "$o"
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(default heap w1024 quick limit)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
run() { # name, then train's flags
	local name=$1
	shift
	"$train" "$@" -json >"$o/$name.json" 2>"$o/$name.err" || { echo "train $* failed:"; tail -5 "$o/$name.err"; }
}
table() { # name, then pytorch_train.py's flags and --go-json files
	local name=$1
	shift
	python3 bench/pytorch_train.py "$@" >"$o/$name.md" 2>&1
	echo "== $name"
	cat "$o/$name.md"
}
for w in "${want[@]}"; do
	case $w in
	default)
		run default -plot "$o/default.svg"
		run default_off -gc-percent off -plot "$o/default_off.svg"
		run default2
		table default --go-json "$o/default.json" --go-json "$o/default_off.json" --go-json "$o/default2.json" ;;
	heap)
		run heap -host-heap 256MiB
		run heap_off -host-heap 256MiB -gc-percent off
		table heap --go-json "$o/heap.json" --go-json "$o/heap_off.json" ;;
	w1024)
		run w1024 -width 1024 -batch 8192
		run w1024_off -width 1024 -batch 8192 -gc-percent off
		table w1024 --width 1024 --batch 8192 --go-json "$o/w1024.json" --go-json "$o/w1024_off.json" ;;
	quick)
		run quick -quick
		run quick_off -quick -gc-percent off
		table quick --quick --go-json "$o/quick.json" --go-json "$o/quick_off.json" ;;
	limit)
		run limit_heap_on -hard-limit 4GiB -host-heap 256MiB -gc-early=true
		run limit_heap_off -hard-limit 4GiB -host-heap 256MiB -gc-early=false
		run limit_on -hard-limit 4GiB -gc-early=true
		run limit_off -hard-limit 4GiB -gc-early=false
		table limit_heap --hard-limit 4GiB --go-json "$o/limit_heap_on.json" --go-json "$o/limit_heap_off.json"
		table limit --hard-limit 4GiB --go-json "$o/limit_on.json" --go-json "$o/limit_off.json" ;;
	*) echo "pacer_runs: unknown configuration $w (default heap w1024 quick limit)" >&2; exit 2 ;;
	esac
done
