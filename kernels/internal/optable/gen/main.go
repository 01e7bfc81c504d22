// Command gen writes the files generated from the table of elementwise
// operations (package optable): run from package kernels by go generate,
// it finds the module root above the working directory.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/gocuda/gocuda/kernels/internal/optable"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "optable/gen:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	files, err := optable.Generate()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// moduleRoot is the nearest directory at or above the working directory
// with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
