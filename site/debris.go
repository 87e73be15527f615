package site

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// A build works in a folder beside the site, ".public.building-123",
// swapped in when it is done (the old site moves to "….old" meanwhile and
// is removed). A build killed (kill -9, a power cut) leaves that folder
// behind. Each working folder has a lock file beside it, ".public.building-
// 123.lock", which the build holds (the kernel's lock, freed when the
// process dies) and in which it signs its name and process id
// ("matrixgen build 123"). A later build removes a working folder only on
// that proof: it can take the lock, so no process holds it, and the file
// is signed, so the folder is matrixgen's. Anything else with the working
// folders' prefix (no lock file, an unsigned one, a link) is left alone,
// however old, and named in the build's stats: removing a folder on its
// age alone removed what a slow build or another program was still using.

// debrisMark is in the name of a build's working folders beside the site.
const debrisMark = ".building-"

// lockSuffix ends the name of a working folder's lock file.
const lockSuffix = ".lock"

// lockSignature begins a lock file a build holds, before its process id:
// it says the folder beside it is matrixgen's.
const lockSignature = "matrixgen build "

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

// release removes what is left of the working folder (nothing, once it
// was swapped in) and its lock file.
func (w *workFolder) release() {
	os.RemoveAll(w.dir)
	os.RemoveAll(w.dir + ".old")
	os.Remove(w.lock.Name())
	w.lock.Close()
}

// removeDebris removes the working folders earlier builds of the site base
// left in parent whose lock files prove them abandoned (clearIfAbandoned),
// and returns the names of those with the working folders' prefix it left
// alone for want of proof. A build running now holds its lock: its folder
// is neither removed nor named.
func removeDebris(parent, base string) (unproven []string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	prefix := "." + base + debrisMark
	proven := map[string]bool{} // by the working folder's name
	for _, e := range entries {
		stem, isLock := strings.CutSuffix(e.Name(), lockSuffix)
		if !strings.HasPrefix(stem, prefix) || !isLock || !e.Type().IsRegular() {
			continue
		}
		proven[stem] = clearIfAbandoned(parent, stem)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(name, lockSuffix), ".old")
		namedByFolder := name == stem+lockSuffix && slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == stem })
		if proven[stem] || namedByFolder {
			continue // removed, in use, or named by its folder
		}
		unproven = append(unproven, name)
	}
	return unproven
}

// clearIfAbandoned removes the working folder stem in parent, its ".old"
// and its lock file when the lock file proves the build that made them
// gone: the lock is free, and the file is signed by matrixgen. The lock is
// held while they are removed, so no build can start using them meanwhile.
// It reports whether the lock file proved anything: that a process holds
// it (a build is running), or that it is free and signed (all removed).
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

// signed reports whether the lock file f was written by a build: its
// signature and a process id, and nothing more.
func signed(f *os.File) bool {
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return false
	}
	pid, ok := strings.CutPrefix(string(b), lockSignature)
	n, err := strconv.Atoi(strings.TrimSuffix(pid, "\n"))
	return ok && err == nil && n > 0 && strings.HasSuffix(pid, "\n")
}
