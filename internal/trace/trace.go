package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// Op is what an event does.
type Op uint8

const (
	// Alloc allocates Event.Size bytes on Event.Stream into Event.Slot.
	Alloc Op = iota + 1
	// Free frees the allocation in Event.Slot; Event.Stream is the stream
	// it was allocated on (the block's last-used stream).
	Free
)

func (o Op) String() string {
	switch o {
	case Alloc:
		return "alloc"
	case Free:
		return "free"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Event is one trace event in replayable form: 16 bytes, no pointers, so
// the whole trace is one flat slice that the garbage collector never scans.
type Event struct {
	// Size is the requested byte count of an allocation (0 for a free).
	Size uint64
	// Slot indexes the replayer's table of live allocations. Slots are
	// reused once freed, so the table is as long as the most allocations
	// ever live at once (Trace.Slots), not as long as the trace.
	Slot uint32
	// Stream is the dense index of the trace stream (see Trace.StreamNumbers).
	Stream uint16
	Op     Op
}

// MaxStreams is the most distinct streams a trace may use.
const MaxStreams = math.MaxUint16 + 1

// Trace is a parsed allocation trace.
type Trace struct {
	// Name is the file name without directories and the .trace(.gz)
	// suffix, "" when parsed from a reader.
	Name string
	// Header holds the header comment lines, without the leading "#".
	Header []string
	// Meta holds the header's "key value" pairs (torch_peak_reserved,
	// allocs, streams, ...) as written.
	Meta map[string]string
	// TorchPeakAllocated and TorchPeakReserved are PyTorch's figures for
	// the recorded run (0 if the header lacks them): its peak of live,
	// rounded blocks and its peak of memory taken from the driver.
	TorchPeakAllocated, TorchPeakReserved uint64

	// Events are the trace's events in program order.
	Events []Event
	// Slots is the number of allocation slots the events use: the most
	// allocations live at once.
	Slots int
	// StreamNumbers maps a dense stream index (Event.Stream) to the stream
	// number written in the trace. Indices follow the numbers' order.
	StreamNumbers []uint64
	// Allocs and Frees count the events of each kind. Allocs-Frees
	// allocations are still live at the end of the trace.
	Allocs, Frees int

	// Cut says where the trace stops short, nil when it was read to its
	// end. A trace cut anywhere (a program that died while recording, a
	// copy that stopped) still parses: Events holds every record that was
	// complete, and Cut says what was not.
	Cut *Cut
	// Ended says the trace holds gocuda's recorder's closing line
	// ("# end allocs N frees M"): the recording was stopped (StopTrace, or
	// every pool closed), not merely left to its periodic flushes.
	Ended bool

	// lines[i] is the 1-based line that Events[i] came from, for errors
	// during replay; nil for traces built by hand.
	lines []uint32
}

// Cut is where a trace stops short. A record counts once its line is
// complete: ended by a newline, or by the end of an intact gzip stream.
// Plain text ends where the file ends, so a plain trace cut exactly
// between records cannot be told from a whole one and has no Cut; a gzip
// trace knows its end (the stream's trailer), so every cut is seen.
type Cut struct {
	// Events is how many events were read: the complete records.
	Events int `json:"events"`
	// Offset is where the complete records end, in bytes of trace text
	// (decompressed, for gzip): the byte at which the cut record begins.
	Offset int64 `json:"offset"`
	// Partial is the start of the record that was cut short (clipped),
	// "" when the cut fell between records.
	Partial string `json:"partial,omitempty"`
	// Gzip is true for a gzip stream that stops before its end; FileBytes
	// is then how many bytes of it there were.
	Gzip      bool  `json:"gzip,omitempty"`
	FileBytes int64 `json:"file_bytes,omitempty"`
}

// String says where the trace ends, as in "the trace ends after 12345
// events, cut mid-record at byte 678901".
func (c *Cut) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the trace ends after %d events, cut ", c.Events)
	if c.Partial != "" {
		b.WriteString("mid-record")
	} else {
		b.WriteString("between records")
	}
	fmt.Fprintf(&b, " at byte %d", c.Offset)
	if c.Gzip {
		fmt.Fprintf(&b, " of its text (the gzip stream stops without its end after %d bytes)", c.FileBytes)
	}
	return b.String()
}

// Streams is the number of distinct streams the trace uses: the length of
// the stream slice Replay needs.
func (t *Trace) Streams() int { return len(t.StreamNumbers) }

// Line is the line of the trace file that event i came from, 0 if unknown.
func (t *Trace) Line(i int) int {
	if i < 0 || i >= len(t.lines) {
		return 0
	}
	return int(t.lines[i])
}

// TorchReservedPerLive is PyTorch's peak reserved over the trace's peak of
// live requested bytes: the figure a pool's reserved/live is compared with.
// It is 0 when the header lacks torch_peak_reserved.
func (t *Trace) TorchReservedPerLive() float64 {
	live, _ := PeakLive(t)
	if live == 0 || t.TorchPeakReserved == 0 {
		return 0
	}
	return float64(t.TorchPeakReserved) / float64(live)
}

// ParseError is a malformed trace line.
type ParseError struct {
	// File is the trace's path, "" when parsed from a reader.
	File string
	// Line is 1-based; 0 for errors not tied to a line (a bad gzip stream).
	Line int
	Msg  string
	// Err is the underlying error, if any (I/O, gzip).
	Err error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("trace ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(" ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	} else {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// maxLine bounds one line. Real lines are under 100 bytes; header comments
// may be longer, but a megabyte without a newline is not a trace.
const maxLine = 1 << 20

// ParseFile reads and parses the trace at path; errors name the path.
func ParseFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	t.Name = NameOf(path)
	return t, nil
}

// NameOf is a trace's name from its path: the base name without
// ".trace.gz", ".trace", ".gz" or ".txt".
func NameOf(path string) string {
	name := path
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	for _, suf := range []string{".gz", ".txt", ".trace"} {
		name = strings.TrimSuffix(name, suf)
	}
	return name
}

// Parse reads a trace from r, gzip-compressed or plain text (told apart by
// the gzip magic bytes). Malformed lines are *ParseError values naming the
// line. Input that stops short (a file cut at any byte, a gzip stream
// without its end) is not an error: the trace holds the complete records
// and Trace.Cut says where it stopped.
func Parse(r io.Reader) (*Trace, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	magic, _ := br.Peek(10)
	if len(magic) == 1 && magic[0] == 0x1f {
		// One byte of a gzip file: a stream cut in its magic.
		return cutTrace(cr.n), nil
	}
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return parseText(br, nil)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		// A header cut short is a trace cut before its first byte of
		// text, unless what there is of it is already wrong (a method
		// other than deflate, reserved flags set).
		if errors.Is(err, io.ErrUnexpectedEOF) && !(len(magic) > 2 && magic[2] != 8) && !(len(magic) > 3 && magic[3]&0xe0 != 0) {
			return cutTrace(cr.n), nil
		}
		return nil, &ParseError{Msg: "bad gzip header", Err: err}
	}
	defer zr.Close()
	return parseText(bufio.NewReaderSize(zr, 64<<10), cr)
}

// cutTrace is a gzip trace cut before any of its text.
func cutTrace(fileBytes int64) *Trace {
	return &Trace{Meta: map[string]string{}, Cut: &Cut{Gzip: true, FileBytes: fileBytes}}
}

// countingReader counts the bytes read through it: for a cut gzip
// stream, how much of the file there was.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// live is the parser's record of one allocation id.
type live struct {
	line   uint32 // where it was allocated
	slot   uint32 // its slot while live
	stream uint16 // its stream number's provisional index
	freed  bool
}

type parser struct {
	t         *Trace
	line      int
	ids       map[uint64]live
	freeSlots []uint32
	// streams maps a stream number to its provisional (first-seen) index;
	// indices are renumbered into the numbers' order at the end.
	streams  map[uint64]uint16
	inHeader bool
}

func (p *parser) errf(format string, args ...any) error {
	return &ParseError{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

// parseText parses the lines of r; gz is the counted gzip file under r,
// nil for plain text.
func parseText(r *bufio.Reader, gz *countingReader) (*Trace, error) {
	p := &parser{
		t:        &Trace{Meta: map[string]string{}},
		ids:      map[uint64]live{},
		streams:  map[uint64]uint16{},
		inHeader: true,
	}
	var off int64   // bytes of text in complete lines
	var long []byte // a line longer than r's buffer, gathered
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxLine {
				return nil, &ParseError{Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
			}
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		if len(line) > maxLine {
			return nil, &ParseError{Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		if err == nil {
			p.line++
			if perr := p.parseLine(line[:len(line)-1]); perr != nil {
				return nil, perr
			}
			off += int64(len(line))
			long = long[:0]
			continue
		}
		// The input ended; line is what came after the last newline.
		rest := bytes.TrimSpace(line)
		switch {
		case errors.Is(err, io.EOF) && gz != nil:
			// An intact gzip stream (its checksum and length checked):
			// its last line is complete without a newline.
			if len(rest) > 0 {
				p.line++
				if perr := p.parseLine(line); perr != nil {
					return nil, perr
				}
			}
		case errors.Is(err, io.EOF):
			// Plain text ends where the file does: a last line without
			// a newline may be a record cut short ("a 12 4096 1" of
			// "a 12 4096 17"), which would parse as a wrong one.
			if len(rest) > 0 {
				p.t.Cut = &Cut{Offset: off, Partial: clip(rest)}
			}
		case gz != nil && errors.Is(err, io.ErrUnexpectedEOF):
			p.t.Cut = &Cut{Offset: off, Partial: clip(rest), Gzip: true, FileBytes: gz.n}
		default:
			return nil, &ParseError{Line: p.line + 1, Msg: "reading trace", Err: err}
		}
		break
	}
	if p.t.Cut != nil {
		p.t.Cut.Events = len(p.t.Events)
	}
	p.finish()
	return p.t, nil
}

func (p *parser) parseLine(line []byte) error {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return nil
	}
	if line[0] == '#' {
		text := bytes.TrimSpace(line[1:])
		if bytes.HasPrefix(text, []byte("end allocs ")) {
			p.t.Ended = true
			return nil
		}
		if p.inHeader {
			return p.header(string(text))
		}
		return nil
	}
	var f [5][]byte
	n := fields(line, f[:])
	if n == 0 {
		return nil // blank but for spaces
	}
	if p.line > math.MaxUint32 {
		return p.errf("trace longer than %d lines", uint64(math.MaxUint32))
	}
	p.inHeader = false
	switch string(f[0]) {
	case "a":
		if n != 4 {
			return p.errf("allocation wants 3 fields (a <id> <bytes> <stream>), got %d in %q", n-1, clip(line))
		}
		return p.alloc(f[1], f[2], f[3])
	case "f":
		if n != 2 {
			return p.errf("free wants 1 field (f <id>), got %d in %q", n-1, clip(line))
		}
		return p.free(f[1])
	}
	return p.errf("unknown event %q: want \"a <id> <bytes> <stream>\", \"f <id>\" or a # comment", clip(f[0]))
}

func (p *parser) alloc(idf, sizef, streamf []byte) error {
	id, err := p.number("id", idf)
	if err != nil {
		return err
	}
	size, err := p.number("size", sizef)
	if err != nil {
		return err
	}
	if size == 0 {
		return p.errf("allocation %d of 0 bytes: sizes must be positive", id)
	}
	snum, err := p.number("stream", streamf)
	if err != nil {
		return err
	}
	if prev, dup := p.ids[id]; dup {
		return p.errf("duplicate id %d: already allocated on line %d", id, prev.line)
	}
	stream, ok := p.streams[snum]
	if !ok {
		if len(p.streams) >= MaxStreams {
			return p.errf("more than %d distinct streams", MaxStreams)
		}
		stream = uint16(len(p.streams))
		p.streams[snum] = stream
		p.t.StreamNumbers = append(p.t.StreamNumbers, snum)
	}
	// Reuse the most recently freed slot: it keeps the slot table as
	// short as the most allocations ever live at once.
	var slot uint32
	if n := len(p.freeSlots); n > 0 {
		slot = p.freeSlots[n-1]
		p.freeSlots = p.freeSlots[:n-1]
	} else {
		slot = uint32(p.t.Slots)
		p.t.Slots++
	}
	p.ids[id] = live{line: uint32(p.line), slot: slot, stream: stream}
	p.t.Events = append(p.t.Events, Event{Op: Alloc, Size: size, Slot: slot, Stream: stream})
	p.t.lines = append(p.t.lines, uint32(p.line))
	p.t.Allocs++
	return nil
}

func (p *parser) free(idf []byte) error {
	id, err := p.number("id", idf)
	if err != nil {
		return err
	}
	l, ok := p.ids[id]
	switch {
	case !ok:
		return p.errf("free of unknown id %d: it was never allocated", id)
	case l.freed:
		return p.errf("free of id %d, which was already freed (allocated on line %d)", id, l.line)
	}
	l.freed = true
	p.ids[id] = l
	p.freeSlots = append(p.freeSlots, l.slot)
	p.t.Events = append(p.t.Events, Event{Op: Free, Slot: l.slot, Stream: l.stream})
	p.t.lines = append(p.t.lines, uint32(p.line))
	p.t.Frees++
	return nil
}

// header reads a header comment: free text (the workload line) and
// "key value" pairs. Only the torch figures must be numbers; other keys
// are kept as text.
func (p *parser) header(text string) error {
	p.t.Header = append(p.t.Header, text)
	if rest, ok := strings.CutPrefix(text, "workload "); ok {
		// "workload NAME; torch VERSION; DEVICE" is a description, not
		// pairs: keep the name only.
		name, _, _ := strings.Cut(rest, ";")
		p.t.Meta["workload"] = strings.TrimSpace(name)
		return nil
	}
	kv := strings.Fields(text)
	for i := 0; i+1 < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		switch k {
		case "torch_peak_allocated", "torch_peak_reserved":
			n, err := p.number(k, []byte(v))
			if err != nil {
				return err
			}
			if k == "torch_peak_allocated" {
				p.t.TorchPeakAllocated = n
			} else {
				p.t.TorchPeakReserved = n
			}
		}
		p.t.Meta[k] = v
	}
	return nil
}

// number parses a decimal uint64 without allocating; what is wrong with a
// bad one is named.
func (p *parser) number(what string, b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, p.errf("missing %s", what)
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, p.errf("bad %s %q: want a non-negative whole number", what, clip(b))
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, p.errf("%s %q is too large", what, clip(b))
		}
		n = n*10 + d
	}
	return n, nil
}

// finish renumbers streams so that dense indices follow the trace's
// stream numbers in order (stream 0 of the trace is streams[0] of the
// replay, whatever order the streams first appeared in).
func (p *parser) finish() {
	t := p.t
	if len(t.StreamNumbers) > 1 && !slices.IsSorted(t.StreamNumbers) {
		sorted := slices.Clone(t.StreamNumbers)
		slices.Sort(sorted)
		remap := make([]uint16, len(sorted))
		for i, num := range sorted {
			remap[p.streams[num]] = uint16(i)
		}
		for i := range t.Events {
			t.Events[i].Stream = remap[t.Events[i].Stream]
		}
		t.StreamNumbers = sorted
	}
	// The parse-time map and free list are garbage now; trim the event
	// slice so a long-lived Trace holds no slack.
	t.Events = slices.Clip(t.Events)
	t.lines = slices.Clip(t.lines)
}

// fields splits line at spaces and tabs into at most len(out) fields, and
// returns how many fields the line has (which may exceed len(out)).
func fields(line []byte, out [][]byte) int {
	n := 0
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if n < len(out) {
			out[n] = line[i:j]
		}
		n++
		i = j
	}
	return n
}

// clip shortens what an error quotes, so a binary blob fed as a trace
// gives a readable message.
func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// PeakLive walks the trace without a pool and returns the peak of live
// requested bytes (the sum of sizes allocated and not yet freed) and the
// index of the event at which it was first reached (-1 for a trace with no
// allocation).
func PeakLive(t *Trace) (peak uint64, at int) {
	sizes := make([]uint64, t.Slots)
	var cur uint64
	at = -1
	for i, e := range t.Events {
		if int(e.Slot) >= len(sizes) {
			// A hand-built trace with Slots unset: grow rather than panic.
			sizes = append(sizes, make([]uint64, int(e.Slot)+1-len(sizes))...)
		}
		switch e.Op {
		case Alloc:
			sizes[e.Slot] = e.Size
			cur += e.Size
			if cur > peak {
				peak, at = cur, i
			}
		case Free:
			cur -= sizes[e.Slot]
			sizes[e.Slot] = 0
		}
	}
	return peak, at
}

// StreamStat is one trace stream's share of a trace.
type StreamStat struct {
	// Number is the stream number written in the trace.
	Number uint64
	// Allocs and Frees count the stream's events; Bytes sums its
	// allocations' requested sizes.
	Allocs, Frees int
	Bytes         uint64
	// PeakLive is the peak of live requested bytes allocated on this
	// stream alone.
	PeakLive uint64
}

// StreamStats breaks the trace down by stream, in stream index order.
func StreamStats(t *Trace) []StreamStat {
	out := make([]StreamStat, t.Streams())
	for i, n := range t.StreamNumbers {
		out[i].Number = n
	}
	cur := make([]uint64, len(out))
	sizes := make([]uint64, t.Slots)
	for _, e := range t.Events {
		if int(e.Stream) >= len(out) {
			continue // a hand-built trace without StreamNumbers
		}
		if int(e.Slot) >= len(sizes) {
			sizes = append(sizes, make([]uint64, int(e.Slot)+1-len(sizes))...)
		}
		st := &out[e.Stream]
		switch e.Op {
		case Alloc:
			st.Allocs++
			st.Bytes += e.Size
			sizes[e.Slot] = e.Size
			cur[e.Stream] += e.Size
			st.PeakLive = max(st.PeakLive, cur[e.Stream])
		case Free:
			st.Frees++
			cur[e.Stream] -= sizes[e.Slot]
			sizes[e.Slot] = 0
		}
	}
	return out
}
