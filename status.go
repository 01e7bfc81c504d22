package gocuda

// Presentation: PoolStatus and MemoryStatus read the registry (pools.go)
// and format what it holds. The one thing the wiring takes from here is
// set from init: the device's status for out-of-memory errors.

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/memprof"
	"github.com/gocuda/gocuda/pool"
)

// DeviceMemory is one device's memory as PoolStatus reports it: what the
// driver says is in use on the device, and what this process's pool holds.
type DeviceMemory struct {
	Device int
	Name   string
	// Total is the device's memory. Used is Total less the driver's free
	// memory: everything in use on the device, by this process's pool, its
	// contexts and every other process. It is 0 when MemInfo failed.
	Total, Used uint64
	// Pool is the strategy's name (GOCUDA_MEMORY_POOL).
	Pool string
	// Stats are the pool's figures: Live and Reserved bytes, their peaks,
	// counts, and the SoftLimit and HardLimit in force (0: none).
	Stats pool.Stats
	// Pressure is the pressure layer's figures (collections, the pacer's
	// target and what it freed and gave back), nil when the pool has no
	// pressure layer (the root package's pools all have one).
	Pressure *gcpressure.Stats
	// Err is why the driver's free memory could not be read, if it could
	// not; Used is 0 then.
	Err error
	// Kinds are the device's unified and pinned memory pools
	// (gocuda.UnifiedPool, gocuda.PinnedPool), in that order, where the
	// program made arrays of those kinds; nil otherwise.
	Kinds []KindPool
	// Graphs are the pools of the device's graphs (cuarray.Capture), one
	// a graph, in the order they were made; nil where there are none.
	// Their memory is outside the device's limits and its pool.
	Graphs []GraphPool
}

// KindPool is one of a device's pools of unified or pinned memory, as
// PoolStatus reports it. Its memory is outside the device's limits and,
// for pinned memory, not the device's: Used does not count it.
type KindPool struct {
	// Memory is pool.UnifiedMemory or pool.PinnedMemory.
	Memory pool.Memory
	// Pool is the strategy's name.
	Pool  string
	Stats pool.Stats
}

// UsedShare is Used as a share of Total, from 0 to 1.
func (d DeviceMemory) UsedShare() float64 {
	if d.Total == 0 {
		return 0
	}
	return float64(d.Used) / float64(d.Total)
}

// DeviceMemories are MemoryStatus's figures, one DeviceMemory a device,
// by ordinal. Printed (fmt.Print), they are a table, one row a device.
type DeviceMemories []DeviceMemory

// String is a table of the devices' memory, a row each, columns aligned:
// the driver's used and total bytes and the share used, the pool's live,
// reserved and cached bytes, and the limits in force; a device's unified
// and pinned memory pools, where they exist, have a row each below it. A device whose free
// memory could not be read shows "unknown", and its error follows the
// table. PoolStatus has the rest: peaks, counts, the pacer.
func (m DeviceMemories) String() string {
	if len(m) == 0 {
		return noPools
	}
	rows := [][]string{{"device", "name", "pool", "used", "live", "reserved", "cached", "limits"}}
	var errs []string
	for _, d := range m {
		used := fmt.Sprintf("%s of %s (%.2f%%)", humanize.IBytes(d.Used), humanize.IBytes(d.Total), 100*d.UsedShare())
		if d.Err != nil {
			used = "unknown of " + humanize.IBytes(d.Total)
			errs = append(errs, d.Err.Error())
		}
		st := d.Stats
		rows = append(rows, []string{fmt.Sprint(d.Device), d.Name, d.Pool, used,
			humanize.IBytes(st.Live), humanize.IBytes(st.Reserved), humanize.IBytes(st.Cached()), limits(st)})
		for _, k := range d.Kinds {
			st := k.Stats
			rows = append(rows, []string{fmt.Sprint(d.Device), d.Name, fmt.Sprintf("%s (%s)", k.Pool, k.Memory), "-",
				humanize.IBytes(st.Live), humanize.IBytes(st.Reserved), humanize.IBytes(st.Cached()), limits(st)})
		}
		for _, g := range d.Graphs {
			st := g.Stats
			rows = append(rows, []string{fmt.Sprint(d.Device), d.Name, fmt.Sprintf("%s (%s)", graphPoolStrategy, g.Name), "-",
				humanize.IBytes(st.Live), humanize.IBytes(st.Reserved), humanize.IBytes(st.Cached()), "none"})
		}
	}
	var b strings.Builder
	writeColumns(&b, rows)
	for _, e := range errs {
		b.WriteString(e + "\n")
	}
	return b.String()
}

// writeColumns writes rows as left-aligned columns two spaces apart, the
// last column unpadded: what text/tabwriter would print, without linking
// it into every program that imports cuarray (docs/imports.md's budget).
func writeColumns(b *strings.Builder, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-len(c)+2))
			}
		}
		b.WriteByte('\n')
	}
}

// limits is "soft = 512 MiB, hard = 768 MiB", or "none".
func limits(st pool.Stats) string {
	var lim []string
	if st.SoftLimit > 0 {
		lim = append(lim, "soft = "+humanize.IBytes(st.SoftLimit))
	}
	if st.HardLimit > 0 {
		lim = append(lim, "hard = "+humanize.IBytes(st.HardLimit))
	}
	if len(lim) == 0 {
		return "none"
	}
	return strings.Join(lim, ", ")
}

// MemoryStatus returns the figures of every device whose pool exists,
// by ordinal, with its unified and pinned memory pools where they exist.
// It makes no pool: a device this process has not allocated on is not
// listed. A device whose free memory cannot be read is listed with Used
// 0, and the error says which and why.
//
//	mem, err := gocuda.MemoryStatus()
//	...
//	fmt.Print(mem) // a table, one row a device
func MemoryStatus() (DeviceMemories, error) { return memoryOf(poolsMade()) }

// memoryOf reads the devices and pools of ps (poolsMade's order) outside
// any lock: MemInfo is a driver call.
func memoryOf(ps []registered) (DeviceMemories, error) {
	var out DeviceMemories
	var errs []error
	for _, r := range ps {
		if r.memory != pool.DeviceMemory {
			if n := len(out); n > 0 && out[n-1].Device == r.device {
				out[n-1].Kinds = append(out[n-1].Kinds, KindPool{Memory: r.memory, Pool: r.pool.Name(), Stats: r.pool.Stats()})
			}
			continue
		}
		p, ord := r.pool, r.device
		dev := p.Device()
		d := DeviceMemory{Device: ord, Name: dev.Info().Name, Total: dev.Info().TotalMemory, Pool: p.Name(), Stats: p.Stats(),
			Graphs: graphPoolsMade(ord)}
		if w, ok := gcpressure.For(p); ok {
			st := w.PressureStats()
			d.Pressure = &st
		}
		free, total, err := dev.MemInfo()
		if err != nil {
			d.Err = fmt.Errorf("device %d: reading its free memory: %w", ord, err)
			errs = append(errs, d.Err)
		} else {
			d.Total, d.Used = total, total-free
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

func init() { outOfMemoryStatus = deviceStatus }

// deviceStatus is device ordinal's part of PoolStatus, for an allocation
// that fails for good.
func deviceStatus(ordinal int) string {
	var mine []registered
	for _, r := range poolsMade() {
		if r.device == ordinal {
			mine = append(mine, r)
		}
	}
	mem, _ := memoryOf(mine)
	var b strings.Builder
	_ = writeStatus(&b, mem, memprof.Enabled())
	return b.String()
}

// PoolStatus returns WritePoolStatus's text, in the manner of CUDA.jl's
// pool_status(). Print it when memory runs short or grows:
//
//	fmt.Print(gocuda.PoolStatus())
func PoolStatus() string {
	var b strings.Builder
	_ = WritePoolStatus(&b) // a strings.Builder does not fail
	return b.String()
}

// WritePoolStatus writes, for each device whose pool exists, the effective
// memory usage (share and bytes of the device's total, as the driver
// counts it), the pool's live and reserved bytes with their peaks, its
// allocation counts, the limits in force, and what the GC pacer did (its
// target, collections, bytes freed and given back); then a line for each
// of the device's unified and pinned memory pools that exists (made by
// the program's first array of that kind), with its live, reserved and
// cached bytes and its counts. It returns the first write
// error; a device whose free memory cannot be read is reported in the text.
func WritePoolStatus(w io.Writer) error {
	// MemoryStatus's error is in each device's Err, which the text shows.
	mem, _ := MemoryStatus()
	return writeStatus(w, mem, memprof.Enabled())
}

// noPools is what the status says before any pool exists.
const noPools = "No device memory pool in use yet: it is made on a device's first allocation.\n"

func writeStatus(w io.Writer, mem []DeviceMemory, tracing bool) error {
	var b strings.Builder
	if len(mem) == 0 {
		b.WriteString(noPools)
	}
	for i, d := range mem {
		if i > 0 {
			b.WriteByte('\n')
		}
		st := d.Stats
		fmt.Fprintf(&b, "Device %d: %s, pool %s\n", d.Device, d.Name, d.Pool)
		if d.Err != nil {
			fmt.Fprintf(&b, "  Effective memory usage: unknown of %s (%v)\n", humanize.IBytes(d.Total), d.Err)
		} else {
			fmt.Fprintf(&b, "  Effective memory usage: %.2f%% (%s/%s)\n", 100*d.UsedShare(), humanize.IBytes(d.Used), humanize.IBytes(d.Total))
		}
		fmt.Fprintf(&b, "  Memory pool usage: %s (%s reserved, %s cached)\n", humanize.IBytes(st.Live), humanize.IBytes(st.Reserved), humanize.IBytes(st.Cached()))
		fmt.Fprintf(&b, "  Peaks: %s live, %s reserved\n", humanize.IBytes(st.LivePeak), humanize.IBytes(st.ReservedPeak))
		fmt.Fprintf(&b, "  Allocations: %s (%.1f%% from the cache), %s; driver: %s, %s, %s reclaimed\n",
			plural(st.Allocs, "allocation"), 100*st.HitRate(), plural(st.Frees, "free"),
			plural(st.DriverAllocs, "allocation"), plural(st.DriverFrees, "free"), humanize.IBytes(st.Reclaimed))
		b.WriteString("  Memory limit: " + limits(st) + "\n")
		if ps := d.Pressure; ps != nil {
			b.WriteString("  GC pacer: ")
			if ps.GCPercent == gcpressure.PacerOff {
				b.WriteString("off\n")
			} else {
				fmt.Fprintf(&b, "target %s (GOCUDA_GC_PERCENT=%d), %s, %s freed, %s given back to the driver\n",
					humanize.IBytes(ps.PacerTarget), ps.GCPercent, plural(uint64(ps.PacerCollections), "collection"),
					humanize.IBytes(ps.PacerFreed), humanize.IBytes(ps.PacerReclaimed))
			}
		}
		for _, k := range d.Kinds {
			st := k.Stats
			fmt.Fprintf(&b, "  %s memory pool %s: %s live (%s reserved, %s cached); %s (%.1f%% from the cache), %s\n",
				upper(k.Memory.String()), k.Pool, humanize.IBytes(st.Live), humanize.IBytes(st.Reserved), humanize.IBytes(st.Cached()),
				plural(st.Allocs, "allocation"), 100*st.HitRate(), plural(st.Frees, "free"))
		}
		for _, g := range d.Graphs {
			st := g.Stats
			closed := ""
			if g.Closed {
				closed = " (closed: given back when its arrays are freed)"
			}
			fmt.Fprintf(&b, "  Graph pool %s%s: %s live (%s reserved, %s cached); %s, %s\n",
				g.Name, closed, humanize.IBytes(st.Live), humanize.IBytes(st.Reserved), humanize.IBytes(st.Cached()),
				plural(st.Allocs, "allocation"), plural(st.Frees, "free"))
		}
	}
	if tracing {
		b.WriteString("\nLeak tracing is on: memprof.WriteReport lists live buffers by allocation site.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// upper is s with its first letter in upper case (ASCII).
func upper(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
