package usage

import "os"

// region is a journal segment's bytes in memory. On Unix mem is a shared
// mapping of the segment file (journal_region_unix.go): a store into it is
// in the page cache at once, and written reports nothing to do. Elsewhere
// mem is a buffer and written writes the bytes just copied into it to the
// file (journal_region_other.go).
type region struct {
	mem []byte
	f   *os.File
}

// zero clears the first n bytes, so the segment reads as empty.
func (r *region) zero(n int) error {
	clear(r.mem[:n])
	return r.written(0, n)
}
