package cuarray

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/kernels"
)

// Summarizing, as NumPy's defaults: an array of more than PrintThreshold
// elements prints the first and last PrintEdgeItems along each axis
// longer than twice that, with "…" between them.
const (
	PrintThreshold = 1000
	PrintEdgeItems = 3
)

// Format implements fmt.Formatter, so that fmt prints an array's values.
// fmt.Println(a) and %v print a header naming the shape, element type and
// device (and backend), then the values:
//
//	2×3 float32 on device 0 (host):
//	[[1 2 3]
//	 [4 5 6]]
//
// The verbs:
//
//   - %v: the header and the values; %+v the same with every element,
//     never summarized;
//   - %s and %q: String's short name, "float32[2 3]", as error messages
//     use it;
//   - any other verb (%g, %e, %.3f, %6.2f, %d, %x, ...): the values alone,
//     each element formatted with that verb, its flags, width and
//     precision, as fmt formats a Go slice's; the '+' flag here too means
//     every element (not a sign).
//
// Values are laid out as NumPy prints them: row-major, nested brackets,
// one row of the last axis per line, a blank line between blocks of higher
// axes, every element padded to the widest shown. A zero-dimensional array
// prints its one value, an empty one "[]". Arrays of more than
// PrintThreshold elements are summarized (see PrintEdgeItems) unless the
// '+' flag is given, and only the elements shown are copied to the host,
// on the buffer's stream as ToSlice copies (so printing waits for the
// work that wrote them, and nothing else). A freed array prints "<freed>"
// instead of values, a nil one "<nil array>", and a read that fails
// "<error: ...>".
func (a *Array[T]) Format(f fmt.State, verb rune) {
	switch verb {
	case 's', 'q':
		fmt.Fprintf(f, fmt.FormatString(f, verb), a.String())
		return
	}
	if a == nil {
		io.WriteString(f, "<nil array>")
		return
	}
	var sb strings.Builder
	if verb == 'v' {
		sb.WriteString(a.header())
		sb.WriteString(":")
	}
	body := a.body(elemFormat(f, verb), f.Flag('+'), f.Flag('-'))
	if verb == 'v' {
		if strings.HasPrefix(body, "<") {
			sb.WriteByte(' ') // a marker stays on the header's line
		} else {
			sb.WriteByte('\n')
		}
	}
	sb.WriteString(body)
	io.WriteString(f, sb.String())
}

// header is "2×3 float32 on device 0 (host)": the shape ("3-element" for
// one dimension, "0-dimensional" for none), element type, device, backend
// and, for other memory than device memory, its kind.
func (a *Array[T]) header() string {
	var sb strings.Builder
	sh := a.shape()
	switch len(sh) {
	case 0:
		sb.WriteString("0-dimensional")
	case 1:
		sb.WriteString(strconv.Itoa(sh[0]) + "-element")
	default:
		for i, d := range sh {
			if i > 0 {
				sb.WriteString("×")
			}
			sb.WriteString(strconv.Itoa(d))
		}
	}
	dev := a.origin.dev
	fmt.Fprintf(&sb, " %s on device %d (%s", kernels.DTypeOf[T](), dev.Ordinal(), backendName(dev))
	if k := a.origin.kind; k != Device {
		sb.WriteString(", " + k.String() + " memory")
	}
	sb.WriteByte(')')
	return sb.String()
}

// backendName is "host" or "cuda": the host backend reports compute
// capability 0.0 (backend.Info), every GPU a real one.
func backendName(dev backend.Device) string {
	if dev.Info().Major == 0 {
		return "host"
	}
	return "cuda"
}

// elemFormat is the format of one element for verb and f's flags, width
// and precision, without '+' (which means "every element").
func elemFormat(f fmt.State, verb rune) string {
	var sb strings.Builder
	sb.WriteByte('%')
	for _, c := range "-# 0" {
		if f.Flag(int(c)) {
			sb.WriteRune(c)
		}
	}
	if w, ok := f.Width(); ok {
		sb.WriteString(strconv.Itoa(w))
	}
	if p, ok := f.Precision(); ok {
		sb.WriteString("." + strconv.Itoa(p))
	}
	sb.WriteRune(verb)
	return sb.String()
}

// gap marks elided indices in printLayout.keep.
const gap = -1

// printLayout is which indices of each axis are printed.
type printLayout struct {
	shape []int
	keep  [][]int // per axis, ascending, with gap where indices are left out
}

func layoutOf(shape []int, n int, all bool) printLayout {
	summarize := !all && n > PrintThreshold
	l := printLayout{shape: shape, keep: make([][]int, len(shape))}
	for ax, d := range shape {
		var k []int
		if summarize && d > 2*PrintEdgeItems {
			for i := range PrintEdgeItems {
				k = append(k, i)
			}
			k = append(k, gap)
			for i := d - PrintEdgeItems; i < d; i++ {
				k = append(k, i)
			}
		} else {
			for i := range d {
				k = append(k, i)
			}
		}
		l.keep[ax] = k
	}
	return l
}

// span is n elements from element off, in row-major order.
type span struct{ off, n int }

// spans lists the runs of elements l shows, in row-major order, adjacent
// runs merged: the copies printing makes.
func (l printLayout) spans() []span {
	nd := len(l.shape)
	if nd == 0 {
		return []span{{0, 1}}
	}
	strides := make([]int, nd)
	st := 1
	for ax := nd - 1; ax >= 0; ax-- {
		strides[ax] = st
		st *= l.shape[ax]
	}
	// Runs of the last axis: the kept indices between gaps.
	var runs []span
	last := l.keep[nd-1]
	for i := 0; i < len(last); {
		if last[i] == gap {
			i++
			continue
		}
		j := i
		for j < len(last) && last[j] != gap {
			j++
		}
		runs = append(runs, span{last[i], j - i})
		i = j
	}
	var out []span
	add := func(s span) {
		if k := len(out) - 1; k >= 0 && out[k].off+out[k].n == s.off {
			out[k].n += s.n
			return
		}
		out = append(out, s)
	}
	var walk func(ax, base int)
	walk = func(ax, base int) {
		if ax == nd-1 {
			for _, r := range runs {
				add(span{base + r.off, r.n})
			}
			return
		}
		for _, i := range l.keep[ax] {
			if i != gap {
				walk(ax+1, base+i*strides[ax])
			}
		}
	}
	walk(0, 0)
	return out
}

// body is the values part of Format: the shown elements read back and
// laid out, or a marker.
func (a *Array[T]) body(format string, all, left bool) string {
	if a.freed.Load() {
		return "<freed>"
	}
	if a.n == 0 {
		return "[]"
	}
	l := layoutOf(a.shape(), a.n, all)
	sp := l.spans()
	total := 0
	for _, s := range sp {
		total += s.n
	}
	vals := make([]T, total)
	if err := a.copySpans("Format", vals, sp); err != nil {
		return "<error: " + err.Error() + ">"
	}
	strs := make([]string, total)
	width := 0
	for i, v := range vals {
		strs[i] = fmt.Sprintf(format, v)
		width = max(width, utf8.RuneCountInString(strs[i]))
	}
	for i, s := range strs {
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(s))
		if left {
			strs[i] = s + pad
		} else {
			strs[i] = pad + s
		}
	}
	if len(l.shape) == 0 {
		return strs[0]
	}
	var sb strings.Builder
	next := 0
	var render func(ax int)
	render = func(ax int) {
		nd := len(l.shape)
		sb.WriteByte('[')
		for i, idx := range l.keep[ax] {
			if i > 0 {
				if ax == nd-1 {
					sb.WriteByte(' ')
				} else {
					sb.WriteString(strings.Repeat("\n", nd-1-ax))
					sb.WriteString(strings.Repeat(" ", ax+1))
				}
			}
			switch {
			case idx == gap:
				sb.WriteString("…")
			case ax == nd-1:
				sb.WriteString(strs[next])
				next++
			default:
				render(ax + 1)
			}
		}
		sb.WriteByte(']')
	}
	render(0)
	return sb.String()
}

// copySpans copies the elements of spans, in order, into dst (which holds
// their total), each with one copy on the buffer's last stream as copyTo
// makes: so it waits for the work that wrote them, and nothing else.
func (a *Array[T]) copySpans(op string, dst []T, spans []span) error {
	if !a.contiguous() {
		// A view is packed first (on its device's default stream, after
		// the work queued on it), and its packed copy read.
		c, err := Ops[T]{}.Contiguous(a)
		if err != nil {
			return err
		}
		defer c.UnsafeFree()
		return c.copySpans(op, dst, spans)
	}
	b := a.buf
	b.mu.Lock()
	if b.block == nil {
		b.mu.Unlock()
		return fmt.Errorf("cuarray: %s: %s: its buffer was freed: %w", op, a, ErrFreed)
	}
	p, l := a.ptr(), b.life
	b.mu.Unlock()
	size := int(unsafe.Sizeof(dst[0]))
	_, err := l.live(func(s backend.Stream) error {
		at := 0
		for _, sp := range spans {
			src := p + backend.Ptr(sp.off*size)
			if err := a.origin.dev.CopyDtoH(unsafe.Pointer(&dst[at]), src, uint64(sp.n*size), s); err != nil {
				return err
			}
			at += sp.n
		}
		return nil
	})
	runtime.KeepAlive(a)
	runtime.KeepAlive(dst)
	if err != nil {
		return fmt.Errorf("cuarray: %s: %s: %w", op, a, err)
	}
	return nil
}
