// Command mksizeclasses writes pool/binned's size-class table,
// sizeclasses.go, from the rules in ../sizeclass. It is run by
// go generate in pool/binned:
//
//	go generate ./pool/binned
//
// or by hand, from pool/binned:
//
//	go run ./internal/mksizeclasses -o sizeclasses.go
package main
