//go:build unix

package main

import (
	"context"
	"errors"
	"testing"
)

// TestPublishesFromOneMachineTakeTurns: a second publish to the place
// another is publishing to from this machine waits for the build folder
// (and says so) rather than build into it at the same time, gives up when
// its context ends, and takes the folder once the first lets it go.
func TestPublishesFromOneMachineTakeTurns(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	const place = "s3://lab/site/"
	ctx := context.Background()
	dir, release, err := cachedFolder(ctx, "publish", place, "public", func() { t.Error("the first publish waited") })
	if err != nil {
		t.Fatal(err)
	}

	waiting := make(chan struct{})
	second, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, _, err := cachedFolder(second, "publish", place, "public", func() { close(waiting) })
		done <- err
	}()
	select {
	case <-waiting: // the second found the folder held
	case err := <-done:
		t.Fatalf("a second publish took the folder another holds (error %v)", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a waiting publish whose context ended: %v, want context.Canceled", err)
	}

	release()
	again, release, err := cachedFolder(ctx, "publish", place, "public", func() { t.Error("waited for a folder nobody holds") })
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if again != dir {
		t.Errorf("the build folder moved from %s to %s", dir, again)
	}
}
