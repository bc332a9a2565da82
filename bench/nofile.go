package main

// File descriptors for the many-streams pass: every held stream is a
// client connection in the harness, one in and one out in the target and
// one in the upstream.

import (
	"fmt"
	"syscall"
)

// raiseFileLimit lifts the harness's soft RLIMIT_NOFILE to its hard limit
// (the Go runtime does so at start too; the children, Go programs all, do
// the same for themselves) and fails when the hard limit is too low for n
// streams through one target: a target holds 2n connections, and
// modelgate's default max_connections is half its limit less 128.
func raiseFileLimit(n int) error {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return fmt.Errorf("reading RLIMIT_NOFILE: %w", err)
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			return fmt.Errorf("raising RLIMIT_NOFILE to %d: %w", r.Max, err)
		}
	}
	if need := uint64(2*n + 512); r.Max < need {
		return fmt.Errorf("-streams %d needs at least %d file descriptors per process (2 per stream and some), the hard limit is %d: raise it (ulimit -Hn) or lower -streams", n, need, r.Max)
	}
	return nil
}
