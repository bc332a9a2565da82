//go:build linux

package usage

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// prefault makes the first n bytes of a mapped region present and writable
// (MADV_POPULATE_WRITE, Linux 5.14 and later), so that Append, which copies
// under the journal's lock, does not take a page fault every ~4 KB; that
// fault is the file system's (it marks the page's block written) and cost
// ~15 µs on the benchmark VM. Best effort: an older kernel refuses it and
// the pages fault in as they are written.
func (r *region) prefault(n int) {
	if r.unmap == nil || n <= 0 {
		return
	}
	_ = unix.Madvise(r.mem[:min(n, len(r.mem))], unix.MADV_POPULATE_WRITE)
}
