package usage

import "os"

// region is a journal segment's bytes in memory. Mapped (Linux,
// journal_region_linux.go), mem is a shared mapping of the segment file
// whose blocks were allocated up front: a store into it is in the page
// cache at once, and written has nothing to do. Buffered (elsewhere, or
// where the file system cannot allocate up front or map), mem is a buffer
// and written writes the bytes just copied into it to the file, one pwrite
// per record.
type region struct {
	mem   []byte
	f     *os.File
	unmap func([]byte) error // nil when buffered
}

// bufferedSegment sizes f to size bytes (zeros, sparse) and keeps its
// contents in a buffer written through to the file.
func bufferedSegment(f *os.File, size int) (*region, error) {
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	return &region{mem: make([]byte, size), f: f}, nil
}

// written makes mem[lo:hi] part of the file: nothing to do when mapped.
func (r *region) written(lo, hi int) error {
	if r.unmap != nil {
		return nil
	}
	_, err := r.f.WriteAt(r.mem[lo:hi], int64(lo))
	return err
}

// zero clears the first n bytes, so the segment reads as empty.
func (r *region) zero(n int) error {
	clear(r.mem[:n])
	return r.written(0, n)
}

// close unmaps or drops mem.
func (r *region) close() error {
	mem := r.mem
	r.mem = nil
	if r.unmap != nil {
		return r.unmap(mem)
	}
	return nil
}
