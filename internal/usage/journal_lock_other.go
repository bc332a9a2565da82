//go:build !unix

package usage

// lockDir takes no lock on systems without flock(2): nothing refuses a
// second process on the same journal directory there, so each process
// must be given its own usage.journal_dir (docs/operations.md).
func lockDir(string) (*dirLock, error) { return nil, nil }
