package audio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// cursor reads a file front to back through a small window, so parsers can
// peek at headers and skip payloads without a read call per header and
// without ever holding more than the window.
type cursor struct {
	r    io.ReaderAt
	size int64
	pos  int64
	buf  []byte
	off  int64 // file offset of buf[0]
}

const window = 64 << 10

func newCursor(r io.ReaderAt, size int64) *cursor {
	return &cursor{r: r, size: size}
}

// errShort is a read past the end of the file.
var errShort = errors.New("unexpected end of file")

// peek returns the n bytes at the current position without moving; the
// slice is valid until the next call.
func (c *cursor) peek(n int) ([]byte, error) {
	if n < 0 || c.pos < 0 || int64(n) > c.size-c.pos {
		return nil, errShort
	}
	if c.pos >= c.off && c.pos+int64(n) <= c.off+int64(len(c.buf)) {
		s := c.pos - c.off
		return c.buf[s : s+int64(n)], nil
	}
	want := int64(max(n, window))
	want = min(want, c.size-c.pos)
	if int64(cap(c.buf)) < want {
		c.buf = make([]byte, want)
	}
	c.buf = c.buf[:want]
	m, err := c.r.ReadAt(c.buf, c.pos)
	if m < n {
		c.buf = c.buf[:0]
		if err == nil || err == io.EOF {
			err = errShort
		}
		return nil, fmt.Errorf("read at %d: %w", c.pos, err)
	}
	c.buf, c.off = c.buf[:m], c.pos
	return c.buf[:n], nil
}

// read is peek then advance.
func (c *cursor) read(n int) ([]byte, error) {
	b, err := c.peek(n)
	if err == nil {
		c.pos += int64(n)
	}
	return b, err
}

// skip advances n bytes; it fails when that passes the end.
func (c *cursor) skip(n int64) error {
	if n < 0 || n > c.size-c.pos {
		return errShort
	}
	c.pos += n
	return nil
}

// ahead returns the bytes from the position to the end of the window,
// loading a new window when fewer than 2 remain in it.
func (c *cursor) ahead() ([]byte, error) {
	if c.pos >= c.off && c.pos+2 <= c.off+int64(len(c.buf)) {
		return c.buf[c.pos-c.off:], nil
	}
	return c.peek(int(min(c.left(), window)))
}

// seek2 moves to the next position, at or after the current one, holding
// the byte b0 followed by a byte whose mask bits equal val (a sync code);
// false (at the end) when there is none. It scans the window in place,
// so a search through megabytes of junk costs one read per window.
func (c *cursor) seek2(b0, mask, val byte) bool {
	for c.left() >= 2 {
		buf, err := c.ahead()
		if err != nil {
			return false
		}
		for j := 0; j+1 < len(buf); j++ {
			i := bytes.IndexByte(buf[j:len(buf)-1], b0)
			if i < 0 {
				break
			}
			j += i
			if buf[j+1]&mask == val {
				c.pos += int64(j)
				return true
			}
		}
		c.pos += int64(len(buf) - 1) // the last byte may start a pair with the next window
	}
	return false
}

// left is how many bytes remain after the position.
func (c *cursor) left() int64 { return c.size - c.pos }

func be16(b []byte) uint64 { return uint64(b[0])<<8 | uint64(b[1]) }
func be32(b []byte) uint64 { return be16(b)<<16 | be16(b[2:]) }
func be64(b []byte) uint64 { return be32(b)<<32 | be32(b[4:]) }
func le16(b []byte) uint64 { return uint64(b[0]) | uint64(b[1])<<8 }
func le32(b []byte) uint64 { return le16(b) | le16(b[2:])<<16 }
func le64(b []byte) uint64 { return le32(b) | le32(b[4:])<<32 }
func be24(b []byte) uint64 { return uint64(b[0])<<16 | be16(b[1:]) }

// satAdd and satMul saturate at the largest uint64, so sums of counts a
// file claims cannot wrap around to something small.
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}
