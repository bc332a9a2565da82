package mp4

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// node is a parsed box: its type, its body and, for containers, its children.
type node struct {
	typ  string
	off  int // of the body in the file
	body []byte
	kids []*node
}

// containers are the boxes whose bodies are boxes (after skip bytes).
var containers = map[string]int{"moov": 0, "trak": 0, "mdia": 0, "minf": 0, "dinf": 0, "stbl": 0,
	"dref": 8, "stsd": 8, "avc1": 78}

// parseBoxes walks the boxes in b (at file offset off), failing on any
// that does not fit exactly.
func parseBoxes(t *testing.T, b []byte, off int) []*node {
	t.Helper()
	var out []*node
	for len(b) > 0 {
		if len(b) < 8 {
			t.Fatalf("%d stray bytes at %d", len(b), off)
		}
		size := int(binary.BigEndian.Uint32(b))
		if size < 8 || size > len(b) {
			t.Fatalf("box %q at %d: size %d of %d left", b[4:8], off, size, len(b))
		}
		n := &node{typ: string(b[4:8]), off: off + 8, body: b[8:size]}
		if skip, ok := containers[n.typ]; ok {
			n.kids = parseBoxes(t, n.body[skip:], n.off+skip)
		}
		out = append(out, n)
		b, off = b[size:], off+size
	}
	return out
}

// find returns the box at the slash-separated path below nodes.
func find(t *testing.T, nodes []*node, path string) *node {
	t.Helper()
	first, rest, _ := strings.Cut(path, "/")
	for _, n := range nodes {
		if n.typ == first {
			if rest == "" {
				return n
			}
			return find(t, n.kids, rest)
		}
	}
	t.Fatalf("no box %q", path)
	return nil
}

func types(nodes []*node) string {
	var s []string
	for _, n := range nodes {
		s = append(s, n.typ)
	}
	return strings.Join(s, " ")
}

func be32(b []byte, i int) int { return int(binary.BigEndian.Uint32(b[4*i:])) }

// table reads a full box's table: entry count then fields per entry.
func table(t *testing.T, n *node, fields int) [][]int {
	t.Helper()
	count := be32(n.body, 1)
	if len(n.body) != 8+4*fields*count {
		t.Fatalf("%s: %d entries in %d bytes", n.typ, count, len(n.body))
	}
	rows := make([][]int, count)
	for i := range rows {
		for f := range fields {
			rows[i] = append(rows[i], be32(n.body, 2+i*fields+f))
		}
	}
	return rows
}

// bitReader reads an RBSP (emulation prevention already removed).
type bitReader struct {
	t   *testing.T
	b   []byte
	pos int // in bits
}

func (r *bitReader) u(n int) uint64 {
	r.t.Helper()
	var v uint64
	for range n {
		if r.pos >= 8*len(r.b) {
			r.t.Fatalf("read past the end of %d bytes", len(r.b))
		}
		v = v<<1 | uint64(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bitReader) ue() uint64 {
	r.t.Helper()
	zeros := 0
	for r.u(1) == 0 {
		zeros++
	}
	return 1<<zeros - 1 + r.u(zeros)
}

func (r *bitReader) se() int64 {
	k := r.ue()
	if k%2 == 1 {
		return int64(k+1) / 2
	}
	return -int64(k / 2)
}

// trailing checks rbsp_trailing_bits end the data.
func (r *bitReader) trailing() {
	r.t.Helper()
	if r.u(1) != 1 {
		r.t.Fatal("no rbsp_stop_one_bit")
	}
	for r.pos%8 != 0 {
		if r.u(1) != 0 {
			r.t.Fatal("a one in rbsp_alignment_zero_bits")
		}
	}
	if r.pos != 8*len(r.b) {
		r.t.Fatalf("%d bytes after the trailing bits", len(r.b)-r.pos/8)
	}
}

// unescape checks that no start code prefix or bad escape is in a NAL
// unit's payload and removes emulation prevention bytes.
func unescape(t *testing.T, nal []byte) []byte {
	t.Helper()
	var out []byte
	zeros := 0
	for i, c := range nal[1:] {
		if zeros >= 2 && c <= 2 {
			t.Fatalf("00 00 %02x at %d of a NAL unit", c, i)
		}
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	if len(out) > 0 && out[len(out)-1] == 0 {
		t.Fatal("a NAL unit ends with a zero byte")
	}
	return out
}

func hexOf(b []byte) string { return fmt.Sprintf("%x", b) }
