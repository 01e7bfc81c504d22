package kernelcache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
)

// Key hashes parts into a cache key: the hex 128-bit FNV-1a hash of the
// parts, each length-prefixed so that no two lists of parts give the same
// bytes. Not a cryptographic hash: the cache guards against accidents
// (two sources meeting by chance: about 2⁻⁶⁴ even among 2³² entries), not
// against someone who can write to the cache folder, who could as well
// replace the program. (crypto/sha256 would link some 30 packages into
// every program that imports cuarray.)
func Key(parts ...string) string {
	h := fnv.New128a()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// From says where Get found an entry.
type From uint8

const (
	Built  From = iota // made by the build function now
	Memory             // made earlier in this process
	Disk               // read from the cache folder
)

func (f From) String() string { return [...]string{"built", "memory", "disk"}[f] }

// Cache is a process's compiled kernels. The zero Cache keeps them in
// memory only.
type Cache struct {
	// Dir is the folder for files ("" for none), made on first write.
	Dir     string
	entries sync.Map // key → *entry
}

type entry struct {
	once sync.Once
	val  []byte
	err  error
	from From
}

// Got is what Get found or made.
type Got struct {
	Val  []byte
	From From
	// WriteErr is a failed write of the file: the value is good, but the
	// next process will build it again. The caller reports it.
	WriteErr error
}

// Get returns the value for key: from memory, else from the folder, else
// made by build and stored in both. build runs at most once per key in a
// process, however many goroutines ask at once; its error is kept as well
// (a given source fails the same way each time) and not written to disk.
func (c *Cache) Get(key string, build func() ([]byte, error)) (Got, error) {
	v, ok := c.entries.Load(key)
	if !ok {
		v, _ = c.entries.LoadOrStore(key, new(entry))
	}
	e := v.(*entry)
	first := false
	var writeErr error
	e.once.Do(func() {
		first = true
		if c.Dir != "" {
			if b, ok := c.read(key); ok {
				e.val, e.from = b, Disk
				return
			}
		}
		e.val, e.err = build()
		e.from = Built
		if e.err == nil && c.Dir != "" {
			writeErr = c.write(key, e.val)
		}
	})
	if !first {
		return Got{Val: e.val, From: Memory}, e.err
	}
	return Got{Val: e.val, From: e.from, WriteErr: writeErr}, e.err
}

// Forget drops every entry held in memory (not the files), so that a
// benchmark or test can time the disk and the build again.
func (c *Cache) Forget() { c.entries.Clear() }

// The file format: magic, the key, the payload's length and 64-bit FNV-1a
// hash, the payload. The key and checksum catch a file cut short, written by
// another version, or corrupted; such a file is a miss.
const magic = "gocuda-kernel-cache 1\n"

func (c *Cache) path(key string) string { return filepath.Join(c.Dir, key+".bin") }

func checksum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func encode(key string, val []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteString(key)
	b.WriteByte('\n')
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(val)))
	b.Write(n[:])
	binary.LittleEndian.PutUint64(n[:], checksum(val))
	b.Write(n[:])
	b.Write(val)
	return b.Bytes()
}

func decode(key string, b []byte) ([]byte, bool) {
	head := magic + key + "\n"
	if !bytes.HasPrefix(b, []byte(head)) || len(b) < len(head)+16 {
		return nil, false
	}
	b = b[len(head):]
	n, sum := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	val := b[16:]
	if uint64(len(val)) != n || checksum(val) != sum {
		return nil, false
	}
	return val, true
}

func (c *Cache) read(key string) ([]byte, bool) {
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	return decode(key, b)
}

// write stores the file whole or not at all: a temporary file in the same
// folder, renamed over the name, so that a reader (another process)
// never sees half of one and a crash leaves at most a stray temporary.
func (c *Cache) write(key string, val []byte) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return fmt.Errorf("kernel cache: %w", err)
	}
	f, err := os.CreateTemp(c.Dir, key+".*.tmp")
	if err != nil {
		return fmt.Errorf("kernel cache: %w", err)
	}
	_, err = f.Write(encode(key, val))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path(key))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("kernel cache: %w", err)
	}
	return nil
}

// Files lists the cache files in the folder, for tests and tools.
func (c *Cache) Files() []string {
	m, _ := filepath.Glob(filepath.Join(c.Dir, "*.bin")) // the pattern is well formed
	return m
}
