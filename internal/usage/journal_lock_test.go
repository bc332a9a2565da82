//go:build unix

package usage

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// One Journal at a time has a directory open: a second open, in this
// process as in another, fails naming the directory and the way out; it
// succeeds once the first is closed, or once its process is gone.
func TestJournalLockRefusesSecondOpen(t *testing.T) {
	tests := []struct {
		name string
		end  func(*Journal) error // how the first holder lets go
	}{
		{"closed", (*Journal).Close},
		{"process died", func(j *Journal) error { j.crash(); return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "journal")
			j, err := OpenJournal(dir)
			if err != nil {
				t.Fatal(err)
			}
			r := jrec(1)
			if _, err := j.Append(&r); err != nil {
				t.Fatal(err)
			}
			_, err = OpenJournal(dir)
			if !errors.Is(err, ErrJournalInUse) {
				t.Fatalf("second open: %v, want ErrJournalInUse", err)
			}
			for _, want := range []string{dir, "another gateway in this process", "give each replica its own usage.journal_dir"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, lockName))
			if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
				t.Errorf("lock file holds %q (%v), want this pid", b, err)
			}
			if err := tc.end(j); err != nil {
				t.Fatal(err)
			}
			j2, err := OpenJournal(dir)
			if err != nil {
				t.Fatalf("open after the first let go: %v", err)
			}
			defer j2.Close()
			recs, _, err := j2.Replay()
			if err != nil || len(recs) != 1 { // never committed: kept by Close as by a crash
				t.Errorf("Replay = %d records, %v; want 1", len(recs), err)
			}
			if err := j.Close(); err != nil { // a second Close, or the dead one's: no effect on j2's lock
				t.Fatal(err)
			}
			if _, err := OpenJournal(dir); !errors.Is(err, ErrJournalInUse) {
				t.Errorf("third open while the second is open: %v", err)
			}
		})
	}
}

// The error names another process's pid from the lock file.
func TestJournalInUseNamesHolder(t *testing.T) {
	tests := []struct{ holder, want string }{
		{"", "another modelgate process;"},
		{"4242", "another modelgate process (pid 4242)"},
		{strconv.Itoa(os.Getpid()), "another gateway in this process"},
	}
	for _, tc := range tests {
		if err := inUse("/d", tc.holder); !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/d is locked") {
			t.Errorf("holder %q: %v, want %q", tc.holder, err, tc.want)
		}
	}
}
