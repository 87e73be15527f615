//go:build unix

package runfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matrixgen/matrixgen/internal/hostile"
)

// swapRounds is how many rounds of hostile.SwapFile a test that opens a
// swapped file waits for, and maxOpens the most opens it tries meanwhile.
const swapRounds, maxOpens = 300, 1_000_000

// TestSwappedAfterListingIsNeverRead: a run file was checked by name (a
// link? regular?) and then opened by name again, so one swapped for a
// link out of the folder, or a FIFO, between the two was read. The open
// is the check now. A file swapped after the folder was listed is
// refused; and while another goroutine swaps it back and forth as fast as
// it can, no read ever returns the bytes outside the folder, nor waits on
// a FIFO.
func TestSwappedAfterListingIsNeverRead(t *testing.T) {
	dir, runs, sample := runsFolder(t)
	secret := bytes.Replace(sample, []byte(`"schema"`), []byte(`"schema" `), 1) // a valid run, other bytes
	outside := filepath.Join(dir, "secret.json")
	os.WriteFile(outside, secret, 0o644)
	name := filepath.Join(runs, "a.json")
	os.WriteFile(name, sample, 0o644)
	listed, err := Files(runs)
	if err != nil || len(listed) != 1 {
		t.Fatalf("listed %q: %v", listed, err)
	}
	os.Remove(name)
	os.Symlink(outside, name)
	if _, err := Read(listed[0]); err == nil || !strings.Contains(err.Error(), "outside the runs folder") {
		t.Errorf("swapped for a link out after listing: %v", err)
	}
	os.Remove(name)
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(listed[0]); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("swapped for a FIFO after listing: %v", err)
	}

	os.Remove(name)
	os.WriteFile(name, sample, 0o644)
	swapper := hostile.SwapFile(name, sample, outside)
	defer func() { t.Logf("%d rounds of swaps", swapper.Stop()) }()
	read, refused := 0, 0
	for i := 0; swapper.Rounds() < swapRounds && i < maxOpens; i++ {
		e, err := Read(name)
		switch {
		case err != nil:
			refused++
		case bytes.Equal(e.Raw, secret):
			t.Fatal("read the file outside the runs folder")
		case !bytes.Equal(e.Raw, sample):
			t.Fatalf("read %d bytes of neither file", len(e.Raw))
		default:
			read++
		}
	}
	t.Logf("%d reads of the run, %d refusals", read, refused)
}

// TestNotesMustBeRegular: a note that is not a regular file (a FIFO, which
// would block a reader) is an error.
func TestNotesMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	sample, _ := os.ReadFile(sampleRun)
	os.WriteFile(filepath.Join(dir, "b.json"), sample, 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "b.md"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := Load(filepath.Join(dir, "b.json")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO for notes: %v", err)
	}
}
