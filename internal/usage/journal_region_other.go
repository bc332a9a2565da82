//go:build !linux

package usage

import "os"

// mapSegment returns a buffered segment: without fallocate a shared
// mapping of a sparse file could fault with SIGBUS on a full disk.
func mapSegment(f *os.File, size int) (*region, error) { return bufferedSegment(f, size) }

// prefault does nothing: a buffered region is ordinary memory.
func (r *region) prefault(int) {}
