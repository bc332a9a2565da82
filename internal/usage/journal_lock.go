package usage

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// lockName is the file in a journal directory that the process with the
// journal open holds locked (lockDir) until Close. It stays in the
// directory afterwards: deleting it while another process waits to lock it
// would let two processes each lock a file of that name.
const lockName = "journal.lock"

// ErrJournalInUse is what OpenJournal's error wraps when another process,
// or another Journal in this one, has the directory open. Two processes
// appending to one journal lose records: each replays, and clears, the
// other's segments as if they were a dead process's.
var ErrJournalInUse = errors.New("usage journal: directory in use")

// inUse is the error for dir being locked by holder, the pid written in
// the lock file ("" when unknown).
func inUse(dir, holder string) error {
	who := "another modelgate process"
	switch {
	case holder == strconv.Itoa(os.Getpid()):
		who = "another gateway in this process"
	case holder != "":
		who = "another modelgate process (pid " + holder + ")"
	}
	return fmt.Errorf("%w: %s is locked by %s; give each replica its own usage.journal_dir",
		ErrJournalInUse, dir, who)
}

// holderPID reads the pid the lock's holder wrote into the lock file, or
// "" when there is none (yet) or it is not a number.
func holderPID(f *os.File) string {
	b := make([]byte, 24)
	n, _ := f.ReadAt(b, 0)
	s := strings.TrimSpace(string(b[:n]))
	if _, err := strconv.Atoi(s); err != nil {
		return ""
	}
	return s
}

// dirLock is a journal directory's lock, held from lockDir until release.
type dirLock struct{ f *os.File }

// release unlocks the directory (closing the file drops the lock); safe
// to call more than once and on a nil lock.
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("usage journal: unlock: %w", err)
	}
	return nil
}
