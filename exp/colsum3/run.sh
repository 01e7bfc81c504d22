#!/bin/bash
cd "$(dirname "$0")"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/colsum3 bench.cu && /tmp/colsum3
python3 anchor.py
