// Package sizeclass computes the size classes of pool/binned and writes
// them as Go source, as Go's runtime does with mksizeclasses.go. It is a
// library so that the package's tests can check the committed table
// against what the generator produces now; the command that writes the
// file is ../mksizeclasses.
//
// The classes:
//
//   - From Alignment up, classes are spaced by Alignment until the
//     spacing an eighth of a power of two would give reaches Alignment
//     (Alignment << StepShift = 2 KiB): 256, 512, ..., 2048. Below that
//     point no class can do better, because every block is a multiple of
//     Alignment anyway.
//   - From there on there are 1 << StepShift = 8 classes per power of two,
//     spaced 2^k / 8 apart within [2^k, 2^(k+1)]: 2304, 2560, ..., 4096,
//     4608, ..., up to and including Max.
//
// With 8 steps per power of two a request just above a class boundary
// 2^k gets 2^k + 2^k/8, so the bytes a block holds beyond its request
// (rounded to Alignment) stay below an eighth of the request and below a
// ninth of the block.
package sizeclass
