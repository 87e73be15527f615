//go:build !unix

package site

import "os"

// createFile writes data to a new or truncated file (writeback is for
// Linux's page cache).
func createFile(name string, data []byte, writeback bool) error {
	return os.WriteFile(name, data, 0o644)
}
