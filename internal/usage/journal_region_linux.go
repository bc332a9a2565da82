//go:build linux

package usage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// mapSegment allocates size bytes of disk to f and maps them shared. The
// blocks are allocated first (fallocate) so that a store into the mapping
// never needs one: on a full disk a sparse mapping would kill the process
// with SIGBUS, where this fails here and Append reports an error. A file
// system that cannot allocate up front or map gets a buffered segment.
func mapSegment(f *os.File, size int) (*region, error) {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, int64(size))
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return bufferedSegment(f, size)
	}
	if err != nil {
		return nil, fmt.Errorf("allocate segment: %w", err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return bufferedSegment(f, size)
	}
	return &region{mem: mem, f: f, unmap: syscall.Munmap}, nil
}
