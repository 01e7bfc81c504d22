#!/bin/bash
# bash exp/colsum4/run.sh [the library's fatbin, gunzipped [quick]]
cd "$(dirname "$0")"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/colsum4 bench.cu -lcuda && /tmp/colsum4 "$@"
