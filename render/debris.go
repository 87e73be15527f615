package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A build works in a folder beside the site, ".public.building-123",
// swapped in when it is done (the old site moves to "….old" meanwhile and
// is removed). A build killed (kill -9, a power cut) leaves that folder
// behind. Each working folder has a lock file beside it, ".public.building-
// 123.lock", which the build holds (the kernel's lock, freed when the
// process dies) and in which it writes its process id: a later build that
// can take the lock of a lock file with an id in it proves the folder is
// matrixgen's and abandoned, and removes it at once. A working folder with
// no lock file (an older matrixgen's, or one whose build died before
// writing it) is removed once older than any build.

// debrisMark is in the name of a build's working folders beside the site.
const debrisMark = ".building-"

// lockSuffix ends the name of a working folder's lock file.
const lockSuffix = ".lock"

// workFolder is a build's working folder and the lock that says it is in
// use.
type workFolder struct {
	dir  string
	lock *os.File
}

// newWorkFolder makes a working folder for the site base in parent: its
// lock file first, held and signed, then the folder of the same name.
func newWorkFolder(parent, base string) (*workFolder, error) {
	lock, err := os.CreateTemp(parent, "."+base+debrisMark+"*"+lockSuffix)
	if err != nil {
		return nil, err
	}
	w := &workFolder{dir: strings.TrimSuffix(lock.Name(), lockSuffix), lock: lock}
	if !holdLock(lock) {
		w.release()
		return nil, fmt.Errorf("lock %s: the file system takes no lock", lock.Name())
	}
	if _, err := fmt.Fprintf(lock, "%d\n", os.Getpid()); err != nil {
		w.release()
		return nil, err
	}
	if err := os.Mkdir(w.dir, 0o700); err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

// release removes what is left of the working folder (nothing, once it
// was swapped in) and its lock file.
func (w *workFolder) release() {
	os.RemoveAll(w.dir)
	os.RemoveAll(w.dir + ".old")
	os.Remove(w.lock.Name())
	w.lock.Close()
}

// removeDebris removes the working folders earlier builds of the site base
// left in parent: at once those whose lock it can take (their build is
// gone), and those without a lock file once older than debrisAge. A build
// running now holds its lock, and is left alone.
func removeDebris(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + base + debrisMark
	locked := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, lockSuffix) || !e.Type().IsRegular() {
			continue
		}
		stem := filepath.Join(parent, strings.TrimSuffix(name, lockSuffix))
		locked[stem] = true
		if abandoned(filepath.Join(parent, name)) {
			os.RemoveAll(stem)
			os.RemoveAll(stem + ".old")
			os.Remove(stem + lockSuffix)
		}
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) || locked[filepath.Join(parent, strings.TrimSuffix(name, ".old"))] {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > debrisAge {
			os.RemoveAll(filepath.Join(parent, name))
		}
	}
}

// abandoned reports whether the build that signed the lock file name is
// gone: its lock can be taken, and it had written its process id (a lock
// file still empty may be one a build has just made, unless it is older
// than any build).
func abandoned(name string) bool {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if !tryLock(f) {
		return false
	}
	var pid int
	if _, err := fmt.Fscan(f, &pid); err == nil && pid > 0 {
		return true
	}
	info, err := f.Stat()
	return err == nil && time.Since(info.ModTime()) > debrisAge
}

// debrisAge is how old a working folder without a lock file must be before
// a build removes it: older than any build, so two builds side by side
// leave each other alone.
var debrisAge = 10 * time.Minute
