//go:build unix

package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/usage"
)

// A second gateway on the same journal folder fails at start, naming the
// folder; one with its own journal_dir starts beside the first; once the
// first is closed, the folder is free again.
func TestSecondGatewayRefusedOnSameJournal(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Database = "sqlite:" + filepath.Join(dir, "mg.db")
	ctx := context.Background()
	first, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	_, err = app.New(ctx, cfg, app.Options{})
	journal := filepath.Join(dir, "journal")
	if !errors.Is(err, usage.ErrJournalInUse) || !strings.Contains(err.Error(), journal) ||
		!strings.Contains(err.Error(), "usage.journal_dir") {
		t.Fatalf("second gateway on %s: %v, want ErrJournalInUse naming it", journal, err)
	}

	own := *cfg
	own.Usage.JournalDir = filepath.Join(dir, "journal-2")
	second, err := app.New(ctx, &own, app.Options{})
	if err != nil {
		t.Fatalf("gateway with its own journal_dir: %v", err)
	}
	if err := errors.Join(second.Close(), first.Close()); err != nil {
		t.Fatal(err)
	}
	again, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
