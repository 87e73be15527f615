package site

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A build works in ".public.building-123" beside the site, which a killed
// build leaves behind. Beside it is ".public.building-123.lock", held
// (the kernel's lock, freed when the process dies) and signed
// ("matrixgen build 123"). A later build removes a working folder only if
// it can take the lock and the file is signed; anything else with the
// prefix is left alone and named in the build's stats: removing by age
// removed what a slow build or another program was still using.

// debrisMark is in the name of a build's working folders beside the site.
const debrisMark = ".building-"

// lockSuffix ends the name of a working folder's lock file.
const lockSuffix = ".lock"

// lockSignature begins a lock file, before the process id.
const lockSignature = "matrixgen build "

// workFolder is a build's working folder and its lock.
type workFolder struct {
	dir  string
	lock *os.File
}

// newWorkFolder makes a working folder for base in parent, its lock first.
func newWorkFolder(parent, base string) (*workFolder, error) {
	lock, err := os.CreateTemp(parent, "."+base+debrisMark+"*"+lockSuffix)
	if err != nil {
		return nil, err
	}
	w := &workFolder{dir: strings.TrimSuffix(lock.Name(), lockSuffix), lock: lock}
	if !holdLock(lock) {
		err = fmt.Errorf("lock %s: the file system takes no lock", lock.Name())
	} else if _, err = fmt.Fprintf(lock, "%s%d\n", lockSignature, os.Getpid()); err == nil {
		err = os.Mkdir(w.dir, 0o700)
	}
	if err != nil {
		w.release()
		return nil, err
	}
	return w, nil
}

// release removes what is left of the working folder and its lock file.
func (w *workFolder) release() {
	os.RemoveAll(w.dir)
	os.RemoveAll(w.dir + ".old")
	os.Remove(w.lock.Name())
	w.lock.Close()
}

// removeDebris removes the working folders of the site base in parent
// proved abandoned (clearIfAbandoned), and returns the names with their
// prefix left for want of proof; a running build's are neither.
func removeDebris(parent, base string) (unproven []string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	prefix := "." + base + debrisMark
	proven := map[string]bool{} // by the working folder's name
	for _, e := range entries {
		stem, isLock := strings.CutSuffix(e.Name(), lockSuffix)
		if isLock && strings.HasPrefix(stem, prefix) && e.Type().IsRegular() {
			proven[stem] = clearIfAbandoned(parent, stem)
		}
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(name, lockSuffix), ".old")
		namedByFolder := name == stem+lockSuffix && slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == stem })
		if !proven[stem] && !namedByFolder { // not removed, in use, nor named by its folder
			unproven = append(unproven, name)
		}
	}
	return unproven
}

// clearIfAbandoned removes the working folder stem in parent, its ".old"
// and its lock file, holding the lock, when the lock is free and signed.
// It reports whether the lock proved anything: a build running, or gone.
func clearIfAbandoned(parent, stem string) (proven bool) {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return false
	}
	defer root.Close()
	f, err := root.OpenFile(stem+lockSuffix, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return false
	}
	if !tryLock(f) {
		return true // a build is running
	}
	if !signed(f) {
		return false
	}
	root.RemoveAll(stem)
	root.RemoveAll(stem + ".old")
	root.Remove(stem + lockSuffix)
	return true
}

// signed reports whether f holds a build's signature and pid, only.
func signed(f *os.File) bool {
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return false
	}
	pid, ok := strings.CutPrefix(string(b), lockSignature)
	n, err := strconv.Atoi(strings.TrimSuffix(pid, "\n"))
	return ok && err == nil && n > 0 && strings.HasSuffix(pid, "\n")
}
