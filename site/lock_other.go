//go:build !unix

package site

import "os"

// holdLock has no lock to take here: working folders are told abandoned by
// their age alone.
func holdLock(f *os.File) bool { return true }

// tryLock never proves a working folder abandoned here.
func tryLock(f *os.File) bool { return false }
