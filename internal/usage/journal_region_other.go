//go:build !unix

package usage

import "os"

// mapSegment sizes f to size bytes and keeps its contents in a buffer.
func mapSegment(f *os.File, size int) (*region, error) {
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	return &region{mem: make([]byte, size), f: f}, nil
}

// written writes mem[lo:hi] to the file.
func (r *region) written(lo, hi int) error {
	_, err := r.f.WriteAt(r.mem[lo:hi], int64(lo))
	return err
}

// close drops the buffer.
func (r *region) close() error {
	r.mem = nil
	return nil
}
