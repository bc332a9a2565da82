//go:build unix

package usage

import (
	"fmt"
	"os"
	"syscall"
)

// mapSegment sizes f to size bytes (a sparse file) and maps it shared.
func mapSegment(f *os.File, size int) (*region, error) {
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map segment: %w", err)
	}
	return &region{mem: mem, f: f}, nil
}

// written has nothing to do: the mapping is the file's page cache.
func (r *region) written(lo, hi int) error { return nil }

// close unmaps the region.
func (r *region) close() error {
	mem := r.mem
	r.mem = nil
	return syscall.Munmap(mem)
}
