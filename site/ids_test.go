package site

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen/internal/testrun"
	"github.com/matrixgen/matrixgen/render"
)

// TestIDsThatDifferOnlyInCase: runs A.json and a.json were built into
// runs/A and runs/a, one folder on a file system that ignores case
// (macOS's, Windows', many bucket mounts): one run's pages overwrote the
// other's. A build, a live site's update and a build from memory refuse
// them, naming both files, and write nothing. Ids of random letters in
// random cases.
func TestIDsThatDifferOnlyInCase(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for range 20 {
		id := randomID(rng)
		other := flipSomeCase(rng, id)
		runs := t.TempDir()
		files := []string{writeRunFile(t, runs, id, testrun.Full(1), ""), writeRunFile(t, runs, "z-other", testrun.Full(2), "")}
		out := filepath.Join(t.TempDir(), "public")
		if _, err := Build(Files(files), render.Site{}, out); err != nil {
			t.Fatal(err)
		}
		before := siteFiles(t, out)
		clash := append(files, writeRunFile(t, runs, other, testrun.Full(3), ""))
		_, err := Build(Files(clash), render.Site{}, out)
		saysBoth(t, err, id+".json", other+".json")
		if after := siteFiles(t, out); !maps.Equal(after, before) {
			t.Errorf("%s and %s: a refused build changed the site", id, other)
		}
		live, _, err := NewLive(context.Background(), files, render.Site{}, filepath.Join(t.TempDir(), "live"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = live.Update(clash)
		saysBoth(t, err, id+".json", other+".json")
		_, err = Build(render.Entries{{ID: id, Run: testrun.Full(1)}, {ID: other, Run: testrun.Full(3)}}, render.Site{}, filepath.Join(t.TempDir(), "mem"))
		saysBoth(t, err, id, other)
	}
}

func saysBoth(t *testing.T, err error, a, b string) {
	t.Helper()
	var bad *render.BadRunsError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "case") {
		t.Errorf("%s and %s: %v", a, b, err)
	}
}

// randomID is a valid run id of letters, digits and dashes.
func randomID(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
	b := []byte{"abcdefghijklmnopqrstuvwxyz"[rng.IntN(26)]}
	for range 1 + rng.IntN(30) {
		b = append(b, chars[rng.IntN(len(chars))])
	}
	return string(b)
}

// flipSomeCase is id with at least one letter's case changed.
func flipSomeCase(rng *rand.Rand, id string) string {
	b := []byte(id)
	for {
		for i, c := range b {
			if rng.IntN(2) == 0 && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				b[i] = c ^ 0x20
			}
		}
		if string(b) != id {
			return string(b)
		}
	}
}
