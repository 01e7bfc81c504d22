// Package libloadtest makes fake library trees for the tests of the
// packages that load CUDA libraries through libload, and binds libm's
// cos through cudalib.h (Install, Cos) so that the binding's C side is
// tested on a machine without CUDA.
package libloadtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tree makes each of files (slash-separated, relative to root) as an
// empty file, with its folders: a stand-in for a wheel or toolkit layout.
// An empty file is not a library, so the loader refuses it with a reason.
func Tree(t testing.TB, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
}
