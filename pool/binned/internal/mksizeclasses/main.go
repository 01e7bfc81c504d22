package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gocuda/gocuda/pool/binned/internal/sizeclass"
)

func main() {
	out := flag.String("o", "sizeclasses.go", "file to write; - for standard output")
	pkg := flag.String("pkg", "binned", "package name of the generated file")
	flag.Parse()
	src, err := sizeclass.Default.Source(*pkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mksizeclasses:", err)
		os.Exit(1)
	}
	if *out == "-" {
		_, err = os.Stdout.Write(src)
	} else {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mksizeclasses:", err)
		os.Exit(1)
	}
}
