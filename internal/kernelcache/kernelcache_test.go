package kernelcache

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyDependsOnEveryPartAndItsBoundaries(t *testing.T) {
	k := Key("13.0", "saxpy", "-arch=sm_90", "src")
	assert.Len(t, k, 32)
	assert.Equal(t, k, Key("13.0", "saxpy", "-arch=sm_90", "src"))
	for _, other := range [][]string{
		{"12.9", "saxpy", "-arch=sm_90", "src"},
		{"13.0", "saxpy", "-arch=sm_80", "src"},
		{"13.0", "saxpy", "-arch=sm_90", "src "},
		{"13.0", "saxp", "y-arch=sm_90", "src"}, // same bytes, other split
	} {
		assert.NotEqual(t, k, Key(other...), "%q", other)
	}
}

// counter is a build function that counts its calls.
func counter(val string, calls *atomic.Int32) func() ([]byte, error) {
	return func() ([]byte, error) {
		calls.Add(1)
		return []byte(val), nil
	}
}

func TestGetBuildsOnceThenServesMemoryThenDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	c := &Cache{Dir: dir}
	var calls atomic.Int32
	k := Key("a")

	g, err := c.Get(k, counter("ptx", &calls))
	require.NoError(t, err)
	require.NoError(t, g.WriteErr)
	assert.Equal(t, Got{Val: []byte("ptx"), From: Built}, g)
	g, err = c.Get(k, counter("other", &calls))
	require.NoError(t, err)
	assert.Equal(t, Got{Val: []byte("ptx"), From: Memory}, g)
	assert.Len(t, c.Files(), 1)

	// Another process: a new Cache over the same folder.
	c2 := &Cache{Dir: dir}
	g, err = c2.Get(k, counter("other", &calls))
	require.NoError(t, err)
	assert.Equal(t, Got{Val: []byte("ptx"), From: Disk}, g)
	assert.EqualValues(t, 1, calls.Load())

	c2.Forget()
	g, err = c2.Get(k, counter("other", &calls))
	require.NoError(t, err)
	assert.Equal(t, Disk, g.From, "after Forget the file is read again")
}

func TestConcurrentGetsBuildOnce(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			g, err := c.Get(Key("k"), counter("v", &calls))
			assert.NoError(t, err)
			assert.Equal(t, "v", string(g.Val))
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, calls.Load())
	assert.Len(t, c.Files(), 1)
	tmp, _ := filepath.Glob(filepath.Join(c.Dir, "*.tmp"))
	assert.Empty(t, tmp, "no temporary file left")
}

func TestBuildErrorsAreKeptInMemoryNotOnDisk(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	boom := errors.New("syntax error")
	calls := 0
	build := func() ([]byte, error) { calls++; return nil, boom }
	_, err := c.Get(Key("bad"), build)
	require.ErrorIs(t, err, boom)
	_, err = c.Get(Key("bad"), build)
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 1, calls)
	assert.Empty(t, c.Files())
}

func TestCorruptFilesAreIgnoredAndRewritten(t *testing.T) {
	k := Key("k")
	good := encode(k, []byte("the image"))
	tests := []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"cut short", good[:len(good)-3]},
		{"flipped payload byte", append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^1)},
		{"longer than written", append(append([]byte{}, good...), 'x')},
		{"another key's file", encode(Key("other"), []byte("the image"))},
		{"another format", append([]byte("gocuda-kernel-cache 0\n"), good[len(magic):]...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			require.NoError(t, os.WriteFile(c.path(k), tc.file, 0o644))
			var calls atomic.Int32
			g, err := c.Get(k, counter("rebuilt", &calls))
			require.NoError(t, err)
			assert.Equal(t, Built, g.From)
			assert.Equal(t, "rebuilt", string(g.Val))
			b, err := os.ReadFile(c.path(k))
			require.NoError(t, err)
			v, ok := decode(k, b)
			assert.True(t, ok, "the file was rewritten whole")
			assert.Equal(t, "rebuilt", string(v))
		})
	}
}

func TestUnwritableFolderStillServesTheValue(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	c := &Cache{Dir: filepath.Join(file, "sub")} // a folder under a file cannot be made
	var calls atomic.Int32
	g, err := c.Get(Key("k"), counter("v", &calls))
	require.NoError(t, err)
	assert.Equal(t, "v", string(g.Val))
	require.Error(t, g.WriteErr)
	assert.Contains(t, g.WriteErr.Error(), "kernel cache")
}
