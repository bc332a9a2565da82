//go:build unix

package usage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// lockDir takes dir's lock file with flock(2), exclusive and without
// waiting, and writes this process's pid into it for the error a second
// opener gets. The lock belongs to the open file: a second open in this
// process conflicts like another process's, and the kernel drops it when
// the process dies however it dies, so a SIGKILLed replica's successor
// opens the directory at once.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("usage journal: lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		holder := holderPID(f)
		_ = f.Close()
		return nil, inUse(dir, holder)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("usage journal: lock %s: %w", path, err)
	}
	pid := strconv.Itoa(os.Getpid()) + "\n"
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(pid), 0) // informative only
	}
	return &dirLock{f: f}, nil
}
