package jsonx

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unsafe"
)

// ChunkChecker is CheckObjectProbe for the chunks of one stream, which
// mostly differ from the chunk before them inside one string value (a
// chat completion chunk's delta content). Such a chunk is checked by that
// string alone: the bytes before and after it are the previous chunk's,
// which passed the whole check, and replacing one string value of valid
// JSON with another valid string leaves it valid, with the same keys, the
// same nesting and the same members (their spans move by the difference
// in length). Any other chunk gets the whole check. The answers are those
// of CheckObjectProbe; the zero value is ready to use, one per stream, and
// Release hands its buffers to the next stream's.
type ChunkChecker struct {
	s    checker
	bufs *chunkBufs // where s's and the fields' buffers came from (Release)
	prev []byte     // the last chunk that passed, copied
	strs []strSpan  // its string values
	// its answers, and the arguments they answer
	spans    []Span
	closeAt  int
	hit      bool
	maxDepth int
	keys     []string
	in       int
	probe    string
}

// strSpan is where a string value starts (its opening quote) and ends
// (just past its closing quote).
type strSpan struct{ start, end int }

// Check is CheckObjectProbe(b, maxDepth, keys, spans, in, probe). The last
// chunk's answers are reused only for the same arguments; keys is compared
// by identity, so it must not be changed in place between calls (a
// package-level list, as openaicompat passes, never is).
func (c *ChunkChecker) Check(b []byte, maxDepth int, keys []string, spans []Span, in int, probe string) (closeAt int, hit bool, err error) {
	if c.same(maxDepth, keys, in, probe) && len(spans) == len(c.spans) {
		if closeAt, ok := c.checkChanged(b, spans); ok {
			return closeAt, c.hit, nil
		}
	}
	if c.bufs == nil { // a stream's first chunk: buffers from an earlier stream
		c.bufs = chunkPool.Get().(*chunkBufs)
		bf := c.bufs
		c.s.strs, c.s.keys.keys, c.s.keys.sets = bf.checkStrs, bf.keys, bf.sets
		c.prev, c.strs, c.spans = bf.prev, bf.strs, bf.spans
	}
	closeAt, hit, err = c.s.objectProbe(b, maxDepth, keys, spans, in, probe, true)
	c.s.b, c.s.want, c.s.spans = nil, nil, nil
	if err != nil {
		c.prev = c.prev[:0]
		return closeAt, hit, err
	}
	c.prev = append(c.prev[:0], b...)
	c.strs = append(c.strs[:0], c.s.strs...)
	c.spans = append(c.spans[:0], spans...)
	c.closeAt, c.hit = closeAt, hit
	c.maxDepth, c.keys, c.in, c.probe = maxDepth, keys, in, probe
	return closeAt, hit, nil
}

// chunkBufs are a ChunkChecker's buffers between streams: a gateway starts
// thousands of streams a second, and six fresh slices for each are GC work.
type chunkBufs struct {
	prev      []byte
	strs      []strSpan
	spans     []Span
	checkStrs []strSpan
	keys      [][]byte
	sets      []map[string]struct{}
}

var chunkPool = sync.Pool{New: func() any {
	return &chunkBufs{prev: make([]byte, 0, 512), strs: make([]strSpan, 0, 16), spans: make([]Span, 0, 8),
		checkStrs: make([]strSpan, 0, 16), keys: make([][]byte, 0, 16), sets: make([]map[string]struct{}, 0, 4)}
}}

// maxPooledChunk bounds the chunk copy kept for another stream, so one
// huge chunk does not stay in memory for good.
const maxPooledChunk = 64 << 10

// Release gives the checker's buffers to a later stream's checker and
// resets it to its zero value; it must not be called while a Check runs,
// and the checker may be used again afterwards (it takes new buffers).
func (c *ChunkChecker) Release() {
	bf := c.bufs
	if bf == nil {
		*c = ChunkChecker{}
		return
	}
	keys, sets := c.s.keys.keys, c.s.keys.sets
	clear(keys[:cap(keys)]) // slices of the last chunk: do not keep it alive
	clear(sets[:cap(sets)])
	*bf = chunkBufs{prev: c.prev[:0], strs: c.strs[:0], spans: c.spans[:0],
		checkStrs: c.s.strs[:0], keys: keys[:0], sets: sets[:0]}
	if cap(bf.prev) > maxPooledChunk {
		bf.prev = make([]byte, 0, 512)
	}
	*c = ChunkChecker{}
	chunkPool.Put(bf)
}

// same reports whether the previous chunk was checked with these arguments.
func (c *ChunkChecker) same(maxDepth int, keys []string, in int, probe string) bool {
	return len(c.prev) > 0 && maxDepth == c.maxDepth && in == c.in && probe == c.probe &&
		len(keys) == len(c.keys) && (len(keys) == 0 || unsafe.SliceData(keys) == unsafe.SliceData(c.keys))
}

// checkChanged checks b against the previous chunk: when they differ only
// inside one string value, and b's version of it is a valid string, it
// fills spans, remembers b and returns b's closing brace.
func (c *ChunkChecker) checkChanged(b []byte, spans []Span) (int, bool) {
	prev := c.prev
	p := commonPrefix(prev, b)
	q := commonSuffix(prev[p:], b[p:])
	// The bytes that differ, prev[p:len(prev)-q], must lie inside one
	// string value t: its opening quote before them, and nothing after
	// it changed. b's string there is then checked to end exactly where
	// the common suffix begins.
	i, found := slices.BinarySearchFunc(c.strs, p, func(s strSpan, p int) int {
		if s.end <= p {
			return -1
		}
		if s.start >= p {
			return 1
		}
		return 0
	})
	if !found {
		return 0, false
	}
	t := c.strs[i]
	if len(prev)-q > t.end {
		return 0, false
	}
	delta := len(b) - len(prev)
	c.s.b, c.s.i = b, t.start
	_, err := c.s.str()
	end := c.s.i
	c.s.b = nil
	if err != nil || end != t.end+delta {
		return 0, false
	}
	for k, sp := range c.spans {
		switch {
		case !sp.Found() || sp.ValEnd < t.end:
		case sp.KeyStart > t.start:
			sp.KeyStart += delta
			sp.ValStart += delta
			sp.ValEnd += delta
		default: // the member holds the string
			sp.ValEnd += delta
		}
		c.spans[k], spans[k] = sp, sp
	}
	for k := i + 1; k < len(c.strs); k++ {
		c.strs[k].start += delta
		c.strs[k].end += delta
	}
	c.strs[i].end += delta
	c.closeAt += delta
	c.prev = append(c.prev[:0], b...)
	return c.closeAt, true
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(a[len(a)-i-8:]) ^ binary.LittleEndian.Uint64(b[len(b)-i-8:])
		if x != 0 {
			return i + bits.LeadingZeros64(x)>>3
		}
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}
