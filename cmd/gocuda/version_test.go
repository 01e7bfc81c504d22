package main

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gocuda/gocuda/cuda"
)

// version's lines: gocuda's version, Go's, cgo and its call path, the
// driver and each library, found as doctor finds them.
func TestVersionSaysWhatThisBuildIsAndFinds(t *testing.T) {
	code, stdout, stderr := runCLI(t, "version")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	n := 4 + len(libraries) // gocuda, Go, cgo, the driver, then a line a library
	require.GreaterOrEqual(t, len(lines), n, stdout)
	assert.Equal(t, "gocuda       (devel)", lines[0], "a test binary is built from the checkout")
	assert.Equal(t, fmt.Sprintf("Go           %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH), lines[1])
	assert.Equal(t, fmt.Sprintf("cgo          %s, call path %s", yes(cgoEnabled), cuda.CallPath()), lines[2])
	assert.Equal(t, "CUDA driver  "+driverSummary(), lines[3])
	missing := false
	for i, l := range libraries {
		want := "not loaded"
		file, err := l.library()
		if err == nil {
			want = l.found(file)
		} else if _, ok := parseSearch(err); ok {
			want = "not found"
		}
		missing = missing || err != nil
		assert.Equal(t, fmt.Sprintf("%-13s%s", l.name, want), lines[4+i])
	}
	if missing {
		require.Len(t, lines, n+1)
		assert.Equal(t, "(gocuda doctor says where the missing libraries were looked for, and why they did not load)", lines[n])
	} else {
		assert.Len(t, lines, n)
	}
	for _, line := range lines {
		assert.LessOrEqual(t, len(line), width, line)
	}
}

func TestDriverSummaryIsShort(t *testing.T) {
	state, v, _ := driver()
	want := map[driverState]string{
		driverUnreachable: "unreachable: built without cgo",
		driverNone:        "none found",
		driverNoGPU:       "loaded, but it sees no GPU",
		driverFailed:      "failed to initialize (gocuda doctor says why)",
		driverOK:          fmt.Sprintf("CUDA %d.%d (driver API version %d)", v/1000, v%1000/10, v),
	}[state]
	assert.Equal(t, want, driverSummary())
}

func TestModuleVersionReadsTheBuildInformation(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build information", nil, "unknown (the binary has no build information)"},
		{"a release", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.4.0"}}, "v0.4.0"},
		{"a checkout", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "(devel)"},
		{"a checkout with its commit", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"},
			Settings: vcs("7290339e0c4b1a2f3d4e5f60718293a4b5c6d7e8", "false")}, "(devel), commit 7290339e0c4b"},
		{"a checkout with changes", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"},
			Settings: vcs("7290339e0c4b1a2f3d4e5f60718293a4b5c6d7e8", "true")}, "(devel), commit 7290339e0c4b with local changes"},
		{"a dependency of another main module", &debug.BuildInfo{Main: debug.Module{Path: "example.com/tool", Version: "v1.0.0"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.3.1"}}}, "v0.3.1"},
		{"no version recorded", &debug.BuildInfo{Main: debug.Module{Path: modulePath}}, "(devel)"},
	} {
		assert.Equal(t, tc.want, moduleVersion(tc.info), tc.name)
	}
}

func TestUsageListsVersion(t *testing.T) {
	var out bytes.Buffer
	usage(&out)
	assert.Contains(t, out.String(), "\n  version  show gocuda's version, Go's, the CUDA driver's and the CUDA libraries found\n")
}
